//! Why a file is not a history, shared by the parser and the checks of each line's values.

use std::fmt;

/// Why a file is not a history: the line (1-based; 0 when the file could not be read at all),
/// the field when one is to blame (`section.enter_us`), and what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "cannot read the history: {}", self.message);
        }
        match &self.field {
            Some(field) => write!(f, "line {}: {field}: {}", self.line, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for ParseError {}
