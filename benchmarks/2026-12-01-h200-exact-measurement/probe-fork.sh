cd /tmp
/usr/bin/time -f "import torch+timm (fx blocked): %e s" python3 -c "
import sys; sys.modules['torchvision.models.feature_extraction']=None
import torch, timm, timm.data, timm.optim; print('dynamo' , 'torch._dynamo' in sys.modules, 'sympy' in sys.modules)"
/usr/bin/time -f "import torch+timm: %e s" python3 -c "import torch, timm, timm.data, timm.optim"
cat > /tmp/w.py <<'PY'
import os, sys, time
t0=time.monotonic()
import torch, timm, timm.data, timm.optim
t1=time.monotonic()
def job(tag):
    a=time.monotonic()
    torch.backends.cudnn.benchmark=True
    m=timm.create_model("resnet26",pretrained=False,num_classes=1000).cuda().train()
    opt=timm.optim.create_optimizer_v2(m,opt="sgd",lr=0.05,weight_decay=2e-5,momentum=0.9)
    crit=torch.nn.CrossEntropyLoss(label_smoothing=0.1).cuda()
    x=torch.randn(128,3,224,224,device="cuda"); y=torch.randint(0,1000,(128,),device="cuda")
    b=time.monotonic(); ts=[]
    for i in range(20):
        s=time.monotonic(); loss=crit(m(x),y); opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); torch.cuda.synchronize(); ts.append(time.monotonic()-s)
    c=time.monotonic()
    for i in range(100):
        loss=crit(m(x),y); opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    torch.cuda.synchronize(); d=time.monotonic()
    print(f"{tag}: init+build {b-a:.2f} s, steps ms {' '.join(f'{t*1000:.0f}' for t in ts[:6])}, steady {128*100/(d-c):.0f} img/s", flush=True)
print(f"import {t1-t0:.2f}", flush=True)
if sys.argv[1]=="fork":
    for k in range(2):
        pid=os.fork()
        if pid==0:
            job(f"forked child {k}"); os._exit(0)
        os.waitpid(pid,0)
else:
    job("plain")
PY
python3 /tmp/w.py plain
python3 /tmp/w.py plain
python3 /tmp/w.py fork
