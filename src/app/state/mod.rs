//! The document's vocabulary, which panels and the timeline speak: the selection, the events it
//! names, and the commands that change it.

pub mod command;
pub mod events;
pub mod selection;
