mod approve;
mod channel;
mod elicitation;
mod support;
mod terminal;
