set -x
nvidia-smi --query-gpu=uuid,persistence_mode,name --format=csv
nproc; cat /proc/cpuinfo | grep "model name" | head -1
cd /tmp
for i in 1 2; do /usr/bin/time -f "import torch: %e s" python3 -c "import torch"; done
/usr/bin/time -f "import torch+timm: %e s" python3 -c "import torch, timm, timm.data, timm.optim"
python3 -X importtime -c "import torch, timm, timm.data, timm.optim" 2> /tmp/imp.txt; sort -t'|' -k2 -n -r /tmp/imp.txt | head -25
python3 - <<'PY'
import time; t0=time.monotonic()
import torch, timm, timm.data, timm.optim
t1=time.monotonic()
torch.cuda.init(); n=torch.cuda.get_device_name(0); t2=time.monotonic()
x=torch.zeros(1,device="cuda"); torch.cuda.synchronize(); t3=time.monotonic()
print(f"import {t1-t0:.2f} cuda init {t2-t1:.2f} first tensor {t3-t2:.2f}")
torch.backends.cudnn.benchmark=True
m=timm.create_model("resnet26",pretrained=False,num_classes=1000).cuda().train(); t4=time.monotonic()
print(f"model build {t4-t3:.2f}")
opt=timm.optim.create_optimizer_v2(m,opt="sgd",lr=0.05,weight_decay=2e-5,momentum=0.9)
crit=torch.nn.CrossEntropyLoss(label_smoothing=0.1).cuda()
x=torch.randn(128,3,224,224,device="cuda"); y=torch.randint(0,1000,(128,),device="cuda")
ts=[]
for i in range(40):
    a=time.monotonic(); loss=crit(m(x),y); opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); torch.cuda.synchronize(); ts.append(time.monotonic()-a)
print("warmup step ms:", " ".join(f"{t*1000:.0f}" for t in ts))
PY
