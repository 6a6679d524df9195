// TEMPORARY stand-in until the full parser lands (helper-1 overwrites this file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity(i128);
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    FormatWrong,
}
impl Quantity {
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let (num, mult): (&str, i128) = if let Some(n) = s.strip_suffix("Gi") {
            (n, 1 << 30)
        } else if let Some(n) = s.strip_suffix("Mi") {
            (n, 1 << 20)
        } else if let Some(n) = s.strip_suffix("Ki") {
            (n, 1 << 10)
        } else if let Some(n) = s.strip_suffix('m') {
            (n, -1)
        } else {
            (s, 1)
        };
        let v: i128 = num.parse().map_err(|_| QuantityError::FormatWrong)?;
        Ok(Quantity(if mult == -1 { v } else { v * mult * 1000 }))
    }
    pub fn milli_value(&self) -> i64 {
        self.0 as i64
    }
    pub fn value(&self) -> i64 {
        ((self.0 + 999) / 1000) as i64
    }
}
