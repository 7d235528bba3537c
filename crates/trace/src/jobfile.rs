//! The job file: everything a training job needs, written by the runner as `job-N.json`
//! and passed as `--job-file PATH`. See `workloads/PROTOCOL.md`.

use serde::{Deserialize, Serialize};

use crate::protocol::ProtocolKind;

/// Reads a job file (`job-N.json`) as a job does: JSON of a [`JobFile`], no unknown field.
pub fn read(text: &str) -> Result<JobFile, String> {
    serde_json::from_str(text).map_err(|e| format!("not a job file: {e}"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub protocol_version: u32,
    pub run_id: String,
    pub workload_id: String,
    /// Index of the job in its workload.
    pub job: u32,
    /// timm model name.
    pub model: String,
    pub batch_size: u32,
    pub data: JobData,
    pub training: Training,
    /// What the job does, every field written (`null` where it has no value).
    #[serde(with = "every_field")]
    pub protocol: ProtocolKind,
    /// Where the job appends its events (JSON lines).
    pub events_path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobData {
    /// `synthetic`, `generated` or `imagefolder`.
    pub source: DataSource,
    /// Dataset name from the spec (`cifar10`, `imagenet64`, `imagenet`).
    pub name: String,
    /// `imagefolder`: the dataset root with `train/` and `val/`; `generated`: the cache
    /// directory under which the generated set is written once and reused.
    pub path: Option<String>,
    /// Stored image side in pixels (32 for CIFAR-10, 64 for ImageNet 64×64, 0 for variable).
    pub image_size: u32,
    pub train_count: u64,
    pub val_count: u64,
    /// Fraction of the counts actually used (generated sets cut to size).
    pub fraction: f64,
    /// Image file format of generated sets (`png` or `jpeg`).
    pub format: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    Synthetic,
    Generated,
    Imagefolder,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Training {
    pub lr: f64,
    pub momentum: f64,
    pub weight_decay: f64,
    pub label_smoothing: f64,
    /// `cosine` (per epoch) or `constant`.
    pub schedule: String,
    /// `fp32` or `amp`.
    pub precision: String,
    pub channels_last: bool,
    pub workers: u32,
    /// Input side in pixels; `None` takes the model's default (224, 288 for efficientnetv2_s).
    pub input_size: Option<u32>,
    pub num_classes: u32,
    pub color_jitter: f64,
    pub validate_every_epoch: bool,
    pub seed: u64,
}

impl Training {
    /// The paper's settings (timm 0.9.5 `train.py` defaults as the authors ran them): SGD
    /// with momentum 0.9, weight decay 2e-5, lr 0.1 × batch / 256 on a cosine schedule,
    /// label smoothing 0.1, FP32, 4 loader workers, colour jitter 0.4, the model's input
    /// size, 1000 classes, validation every epoch, seed 42.
    pub fn paper(batch_size: u32) -> Training {
        Training {
            lr: 0.1 * batch_size as f64 / 256.0,
            momentum: 0.9,
            weight_decay: 2e-5,
            label_smoothing: 0.1,
            schedule: "cosine".into(),
            precision: "fp32".into(),
            channels_last: false,
            workers: 4,
            input_size: None,
            num_classes: 1000,
            color_jitter: 0.4,
            validate_every_epoch: true,
            seed: 42,
        }
    }
}

/// A job file's protocol: every field of its [`ProtocolKind`] written, `null` where an
/// optional one has no value and `min_iterations` 0 where the plan has none
/// (`workloads/PROTOCOL.md`); read, no field besides those.
mod every_field {
    use crate::protocol::ProtocolKind;
    use serde::{de, ser, Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{Map, Value};

    /// The protocol as a job file writes it: as the plan does, and the three fields that the
    /// plan leaves out without a value (the last of `quick`) written in their place.
    fn written(p: &ProtocolKind) -> Result<Map<String, Value>, String> {
        let Value::Object(mut m) = serde_json::to_value(p).map_err(|e| e.to_string())? else {
            return Err("a protocol is not written as a JSON object".into());
        };
        if let ProtocolKind::Window { min_iterations, precision_target, max_window_seconds, .. } = *p {
            for (k, v) in [
                ("min_iterations", Value::from(min_iterations.unwrap_or(0))),
                ("precision_target", Value::from(precision_target)),
                ("max_window_seconds", Value::from(max_window_seconds)),
            ] {
                m.shift_remove(k);
                m.insert(k.to_string(), v);
            }
        }
        Ok(m)
    }

    pub(super) fn serialize<S: Serializer>(p: &ProtocolKind, s: S) -> Result<S::Ok, S::Error> {
        written(p).map_err(ser::Error::custom)?.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ProtocolKind, D::Error> {
        let given = Map::<String, Value>::deserialize(d)?;
        let p: ProtocolKind = serde_json::from_value(Value::Object(given.clone())).map_err(de::Error::custom)?;
        let known = written(&p).map_err(de::Error::custom)?;
        match given.keys().find(|k| !known.contains_key(*k)) {
            Some(k) => Err(de::Error::custom(format!(
                "unknown field `{k}` of a `{}` protocol, expected one of {}",
                known.get("kind").and_then(Value::as_str).unwrap_or_default(),
                known.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ))),
            None => Ok(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job file under a `quick` protocol as written, after checking that it reads back
    /// (`min_iterations` 0 where it had none).
    fn quick(min_iterations: Option<u32>, precision_target: Option<f64>, max_window_seconds: Option<f64>) -> String {
        let job = |min_iterations| JobFile {
            protocol_version: 2,
            run_id: "r".into(),
            workload_id: "w".into(),
            job: 0,
            model: "resnet26".into(),
            batch_size: 32,
            data: JobData {
                source: DataSource::Synthetic,
                name: "cifar10".into(),
                path: None,
                image_size: 32,
                train_count: 50000,
                val_count: 10000,
                fraction: 1.0,
                format: "png".into(),
            },
            training: Training::paper(32),
            protocol: ProtocolKind::Window {
                warmup_steps: 15,
                window_seconds: 10.0,
                sample_every: 10,
                min_iterations,
                precision_target,
                max_window_seconds,
            },
            events_path: "e".into(),
        };
        let text = serde_json::to_string(&job(min_iterations)).unwrap();
        assert_eq!(read(&text).unwrap(), job(Some(min_iterations.unwrap_or(0))));
        text
    }

    /// Every field of the protocol is written, in the order the job file always had.
    #[test]
    fn protocol_written_whole() {
        let of =
            |text: String| text[text.find("\"protocol\"").unwrap()..text.find(",\"events_path\"").unwrap()].to_string();
        assert_eq!(
            of(quick(Some(50), None, None)),
            r#""protocol":{"kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":50,"precision_target":null,"max_window_seconds":null}"#
        );
        assert_eq!(
            of(quick(None, Some(0.02), Some(40.0))),
            r#""protocol":{"kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":0,"precision_target":0.02,"max_window_seconds":40.0}"#
        );
        assert_eq!(
            of(quick(Some(5), None, Some(40.0))),
            r#""protocol":{"kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":5,"precision_target":null,"max_window_seconds":40.0}"#
        );
    }

    #[test]
    fn protocol_takes_no_other_field() {
        let text = quick(Some(50), None, None);
        let bad = text.replace("\"min_iterations\":50", "\"min_iterations\":50,\"extra\":1");
        let e = read(&bad).unwrap_err();
        assert!(e.contains("unknown field `extra` of a `quick` protocol"), "{e}");
        assert!(read(&text.replace("\"kind\":\"quick\"", "\"kind\":\"window\"")).is_err());
        let paper = text.replace(
            "\"kind\":\"quick\",\"warmup_steps\":15,\"window_seconds\":10.0,\"sample_every\":10,\"min_iterations\":50,\"precision_target\":null,\"max_window_seconds\":null",
            "\"kind\":\"paper\",\"epochs\":1,\"sample_every\":10",
        );
        assert_eq!(read(&paper).unwrap().protocol, ProtocolKind::Epochs { epochs: 1, sample_every: 10 });
        assert!(read(&paper.replace("\"epochs\":1", "\"epochs\":1,\"warmup_steps\":1")).is_err());
    }
}
