//! The registry's pass over a write's observers: side by side, ordered by the servers'
//! sync, and the texts from before the call kept for a reader that outlives the pass.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

use crate::{
    CallCtx, PreImage, RegistryBuilder, Run, Section, Surface, Tier, Tool, ToolError, ToolOutput,
    WriteObserver, WritePass,
};

fn run() -> (tempfile::TempDir, Arc<Run>) {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::for_test(dir.path(), "c");
    (dir, run)
}

/// What the check found: the image it took, and what is left once it let go.
type Found = (Option<PreImage>, Option<PreImage>);

/// Writes `f.txt` and, like a rename, leaves a check running past its answer that reads
/// the file's text from before once told to.
struct WritesAndLeavesACheck {
    go: Mutex<Option<oneshot::Receiver<()>>>,
    found: Mutex<Option<oneshot::Sender<Found>>>,
}

#[async_trait::async_trait]
impl Tool for WritesAndLeavesACheck {
    fn name(&self) -> &str {
        "w"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "writes".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type":"object"})
    }
    async fn call(&self, ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        let ws = ctx.run.workspace().clone();
        let f = ctx.run.root().join("f.txt");
        crate::safe_write::write_file(&ws, &f, b"new").unwrap();
        let hold = ws.pre_write_images().hold(std::slice::from_ref(&f));
        let go = self.go.lock().unwrap().take().unwrap();
        let found = self.found.lock().unwrap().take().unwrap();
        tokio::spawn(async move {
            let _ = go.await;
            let taken = ws.pre_write_images().take(&f);
            drop(hold);
            let left = ws.pre_write_images().before(&f).as_deref().cloned();
            let _ = found.send((taken, left));
        });
        Ok(ToolOutput::text("written").with_touched(vec![ctx.run.root().join("f.txt")]))
    }
}

/// Reads the text from before the call, as the tests a write reaches do.
struct ReadsBefore;

#[async_trait::async_trait]
impl WriteObserver for ReadsBefore {
    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        let images = ctx.run.workspace().pre_write_images();
        let seen = match images.before(&touched[0]).as_deref() {
            Some(PreImage::Content(b)) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        };
        vec![Section::new("before", seen)]
    }
}

#[tokio::test]
async fn a_check_left_running_past_the_answer_still_has_the_text_from_before() {
    let (dir, run) = run();
    std::fs::write(dir.path().join("f.txt"), "old").unwrap();
    run.workspace().pre_write_images().enable();
    let (go_tx, go) = oneshot::channel();
    let (found, found_rx) = oneshot::channel();
    let reg = RegistryBuilder::new(run)
        .tool(Arc::new(WritesAndLeavesACheck {
            go: Mutex::new(Some(go)),
            found: Mutex::new(Some(found)),
        }))
        .observer(Arc::new(ReadsBefore))
        .build()
        .unwrap();
    let out = reg.call(Surface::FULL, "w", json!({})).await.unwrap();
    assert_eq!(out.text, "written");
    assert_eq!(out.sections.len(), 1);
    assert_eq!(out.sections[0].body, "old");
    // The call has answered and its observers have run: the check reads it now.
    go_tx.send(()).unwrap();
    let (taken, left) = found_rx.await.unwrap();
    assert_eq!(taken, Some(PreImage::Content(b"old".to_vec())));
    // Its last holder done, the image is gone.
    assert_eq!(left, None);
}

/// Events of one pass, in order.
type Log = Arc<Mutex<Vec<&'static str>>>;

/// Shows the servers the text from before, then the new text, then waits for a verdict:
/// here, until the other observer has started (which it would never, one after the other).
struct Syncs {
    log: Log,
    other_started: Arc<Notify>,
}

#[async_trait::async_trait]
impl WriteObserver for Syncs {
    async fn after_write(&self, _: &CallCtx, _: &[PathBuf]) -> Vec<Section> {
        unreachable!("the registry calls after_write_in")
    }
    fn syncs_servers(&self) -> bool {
        true
    }
    async fn after_write_in(&self, _: &CallCtx, _: &[PathBuf], pass: &WritePass) -> Vec<Section> {
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.log.lock().unwrap().push("synced");
        pass.servers_synced();
        self.other_started.notified().await;
        self.log.lock().unwrap().push("verdict");
        vec![Section::new("diagnostics", "none")]
    }
}

/// Asks the servers about the written text.
struct Asks {
    log: Log,
    started: Arc<Notify>,
}

#[async_trait::async_trait]
impl WriteObserver for Asks {
    async fn after_write(&self, _: &CallCtx, _: &[PathBuf]) -> Vec<Section> {
        unreachable!("the registry calls after_write_in")
    }
    async fn after_write_in(&self, _: &CallCtx, _: &[PathBuf], pass: &WritePass) -> Vec<Section> {
        pass.wait_servers_synced().await;
        self.log.lock().unwrap().push("asks");
        self.started.notify_one();
        vec![Section::new("tests", "1")]
    }
}

#[tokio::test]
async fn a_writes_observers_run_side_by_side_once_the_servers_have_the_write() {
    let (_d, run) = run();
    let log: Log = Arc::default();
    let started = Arc::new(Notify::new());
    let reg = RegistryBuilder::new(run)
        .tool(Arc::new(WritesAndLeavesACheck {
            go: Mutex::new(Some(oneshot::channel().1)),
            found: Mutex::new(Some(oneshot::channel().0)),
        }))
        // The asking observer first: the order of registration is not what orders them.
        .observer(Arc::new(Asks {
            log: Arc::clone(&log),
            started: Arc::clone(&started),
        }))
        .observer(Arc::new(Syncs {
            log: Arc::clone(&log),
            other_started: started,
        }))
        .build()
        .unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(10),
        reg.call(Surface::FULL, "w", json!({})),
    )
    .await
    .expect("the observers ran side by side")
    .unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["synced", "asks", "verdict"]);
    // Sections in the observers' order.
    let sections: Vec<(&str, &str)> = out
        .sections
        .iter()
        .map(|s| (s.title.as_str(), s.body.as_str()))
        .collect();
    assert_eq!(sections, vec![("tests", "1"), ("diagnostics", "none")]);
}
