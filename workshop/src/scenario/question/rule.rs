//! An option's rule, written as the words `loadtest questions` prints and evaluated as they
//! read: comparisons joined by `and`, alternatives by `or` (`and` binds first), each
//! comparison `a OP b` with OP one of `==`, `!=`, `<`, `<=`, `>`, `>=`, and each side a figure,
//! a number, or either divided or multiplied by a number (`initial_stock / 10`). A figure the
//! run did not measure is NaN, so every comparison on it but `!=` is false: a rule on a figure
//! the run lacks holds for no option (`!=` is how a rule says "unless this figure is 0").
//!
//! One text for the rule and its words: what the class is told the rule is, is the rule.

use super::Figures;

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand<'a> {
    Figure(&'a str),
    Number(f64),
    /// A figure or number, divided (`/`) or multiplied (`*`) by a number.
    Scaled(Box<Operand<'a>>, char, f64),
}

/// One comparison of a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison<'a> {
    pub left: Operand<'a>,
    pub op: &'a str,
    pub right: Operand<'a>,
}

/// A rule: alternatives, each a conjunction of comparisons.
pub type Rule<'a> = Vec<Vec<Comparison<'a>>>;

const OPS: &[&str] = &["==", "!=", "<=", ">=", "<", ">"];

/// Reads a rule's words; an error names what it could not read.
pub fn parse(words: &str) -> Result<Rule<'_>, String> {
    words
        .split(" or ")
        .map(|alternative| alternative.split(" and ").map(comparison).collect())
        .collect()
}

fn comparison(words: &str) -> Result<Comparison<'_>, String> {
    let tokens: Vec<&str> = words.split_whitespace().collect();
    let at = tokens
        .iter()
        .position(|t| OPS.contains(t))
        .ok_or_else(|| format!("no comparison in `{words}`"))?;
    Ok(Comparison {
        left: operand(&tokens[..at], words)?,
        op: tokens[at],
        right: operand(&tokens[at + 1..], words)?,
    })
}

fn operand<'a>(tokens: &[&'a str], words: &str) -> Result<Operand<'a>, String> {
    let atom = |t: &'a str| -> Result<Operand<'a>, String> {
        if let Ok(n) = t.parse::<f64>() {
            Ok(Operand::Number(n))
        } else if t.starts_with(|c: char| c.is_ascii_lowercase())
            && t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            Ok(Operand::Figure(t))
        } else {
            Err(format!(
                "`{t}` is neither a figure nor a number in `{words}`"
            ))
        }
    };
    match tokens {
        [one] => atom(one),
        [one, op @ ("/" | "*"), by] => {
            let Operand::Number(by) = atom(by)? else {
                return Err(format!("`{by}` is no number in `{words}`"));
            };
            let op = if *op == "/" { '/' } else { '*' };
            Ok(Operand::Scaled(Box::new(atom(one)?), op, by))
        }
        _ => Err(format!("cannot read `{}` in `{words}`", tokens.join(" "))),
    }
}

fn value(operand: &Operand<'_>, figures: &Figures) -> f64 {
    match operand {
        Operand::Figure(name) => figures.get(*name).copied().unwrap_or(f64::NAN),
        Operand::Number(n) => *n,
        Operand::Scaled(inner, '/', by) => value(inner, figures) / by,
        Operand::Scaled(inner, _, by) => value(inner, figures) * by,
    }
}

impl Comparison<'_> {
    fn holds(&self, figures: &Figures) -> bool {
        let (a, b) = (value(&self.left, figures), value(&self.right, figures));
        match self.op {
            "==" => a == b,
            "!=" => a != b,
            "<" => a < b,
            "<=" => a <= b,
            ">" => a > b,
            _ => a >= b,
        }
    }
}

/// Whether `words` hold on `figures`. Words that do not read as a rule hold for nothing (the
/// tests read every rule of the deck, so none reaches a run).
pub fn holds(words: &str, figures: &Figures) -> bool {
    parse(words).is_ok_and(|rule| {
        rule.iter()
            .any(|all| all.iter().all(|comparison| comparison.holds(figures)))
    })
}

/// The figures a rule's words name.
pub fn figures_named(words: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for alternative in parse(words).unwrap_or_default() {
        for comparison in alternative {
            for side in [&comparison.left, &comparison.right] {
                let mut side = side;
                while let Operand::Scaled(inner, _, _) = side {
                    side = inner;
                }
                if let Operand::Figure(name) = side {
                    if !names.contains(name) {
                        names.push(*name);
                    }
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(pairs: &[(&str, f64)]) -> Figures {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn a_rule_reads_as_its_words_say() {
        let f = figures(&[("oversold", 7.0), ("initial_stock", 100.0), ("orders", 0.0)]);
        assert!(holds("oversold > 0 and oversold <= initial_stock / 10", &f));
        assert!(!holds("oversold > initial_stock / 10", &f));
        assert!(holds("orders > 0 or oversold >= 7", &f));
        assert!(
            holds("sold_after_stall != 0", &f),
            "an absent figure is no 0"
        );
        assert!(!holds("sold_after_stall == 0", &f));
        assert!(!holds("max_latency_ms >= 800", &f));
        assert!(holds("orders * 2 < 1", &f));
        assert!(parse("oversold >> 0").is_err());
        assert!(parse("Oversold > 0").is_err());
        assert_eq!(
            figures_named("orders > 0 and sold_after_stall != 0 or orders == initial_stock"),
            ["orders", "sold_after_stall", "initial_stock"]
        );
    }
}
