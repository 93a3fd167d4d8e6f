//! A radio cell as the world sees it: the `RadioCell` that carries packets, plus what the cell
//! records — its own series (sampled with its own counters), its rows in the memory budget and its
//! section of summary.json. Each kind implements `RecordedCell` next to its adapter
//! (`crate::mmwave_record`, `crate::wifi_record`), so the world, the recorder, the summary, the
//! budget and the bindings never name a cell kind. Adding a kind: its adapter, its record file,
//! one line in `build` and one in `crate::CELL_SERIES`.

use crate::recorder::{Columns, SeriesSchema};
use tcplab_core::{SimDuration, SimTime};
use tcplab_net::radio::RadioCell;
use tcplab_net::Node;

/// A radio cell with what it records (see the module header).
pub trait RecordedCell: Send {
    fn radio(&self) -> &dyn RadioCell;
    fn radio_mut(&mut self) -> &mut dyn RadioCell;

    /// The series it records; its name is also the key of its summary section.
    fn series(&self) -> &'static SeriesSchema;

    /// Rows it records per sample, and what one row stands for ("UE"), as the memory budget
    /// counts and names them.
    fn rows_per_sample(&self) -> usize;
    fn row_noun(&self) -> &'static str;

    /// Preallocates its series for `samples` samples.
    fn reserve(&mut self, samples: usize);

    /// Records one sample at `now`, `interval` after the previous one (the cell has been run up
    /// to `now`).
    fn sample(&mut self, now: SimTime, interval: SimDuration);

    /// Hands its series out (leaving it empty).
    fn take_columns(&mut self) -> Columns;

    /// Its section of summary.json for a run that ended at `end`.
    fn summary(&self, nodes: &[Node], end: SimTime) -> serde_json::Value;
}
