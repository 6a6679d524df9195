//! Exact parsing of Kubernetes resource quantities (`resource.Quantity`).
//!
//! # Grammar
//!
//! A quantity is `<signedNumber><suffix>`, with no surrounding whitespace:
//!
//! ```text
//! signedNumber    ::= [ "+" | "-" ] number
//! number          ::= digits | digits "." digits | digits "." | "." digits
//! suffix          ::= binarySI | decimalSI | decimalExponent
//! binarySI        ::= "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"        (powers of 1024)
//! decimalSI       ::= "n" | "u" | "m" | "" | "k" | "M" | "G" | "T" | "P" | "E"
//! decimalExponent ::= ( "e" | "E" ) [ "+" | "-" ] digits            (e.g. 1e3, 2E-3)
//! ```
//!
//! Examples: `100m`, `1.5`, `.5`, `5.`, `500Mi`, `1.5Gi`, `2k`, `1e3`, `-1`.
//!
//! Text that does not have the overall shape of a quantity (`""`, `1.2.3`, `1 Gi`,
//! `1KiB`, `0x10`, `Mi`) is rejected with [`QuantityError::FormatWrong`]; a
//! well-shaped but unknown suffix (`1e`, `1ki`, `1Mb3`) is rejected with
//! [`QuantityError::Suffix`]. The messages are Kubernetes' own.
//!
//! # Value
//!
//! The number is held exactly as `mantissa * 10^exponent` (binary suffixes are
//! multiplied out, so `1.5Gi` is exactly `1610612736`). As in Kubernetes:
//!
//! - a non-zero value is rounded *away from zero* to a whole number of nano-units
//!   (`0.1n` becomes `1n`);
//! - a value with a binary suffix is capped at `2^63 - 1` in magnitude;
//! - [`Quantity::value`] and [`Quantity::milli_value`] round away from zero and
//!   saturate at the `i64` bounds.
//!
//! Equality is numeric: `1`, `1000m` and `1e0` are equal. Values are exact up to
//! 38 significant digits, which covers every quantity below `10^29` in magnitude;
//! beyond that the last kept digit is rounded up, and decimal exponents above
//! `i32::MAX` are clamped. Neither changes the saturated results of `value()` or
//! `milli_value()`.
//!
//! # Differences from Kubernetes
//!
//! - Kubernetes' scanner also accepts text with no digits at all (`+`, `-`, `.`,
//!   `Mi`) as zero; here it is rejected with [`QuantityError::FormatWrong`].
//! - Kubernetes truncates a decimal exponent to 32 bits (`1e4294967296` is `1`);
//!   here huge exponents saturate.
//! - For some negative values Kubernetes' big-decimal path rounds `Value()` towards
//!   +infinity, and it can wrap on overflow; here rounding is always away from zero
//!   (as on its `int64` path and in its documentation) and results saturate.

use std::str::FromStr;

/// Most significant decimal digits kept in the mantissa (`10^38 - 1` fits an `i128`).
const MAX_DIGITS: usize = 38;
/// Kubernetes never keeps more precision than nano-units (`10^-9`).
const NANO_EXPONENT: i128 = -9;

/// A parsed resource quantity, held exactly as `mantissa * 10^exponent`.
///
/// The representation is normalized (no trailing zeros in the mantissa, zero is
/// `0 * 10^0`), so the derived equality is numeric equality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
}

/// Why a string is not a quantity. `Display` gives Kubernetes' wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Kubernetes' `ErrFormatWrong`: the text is not shaped like a quantity.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    FormatWrong,
    /// Kubernetes' `ErrSuffix`: the suffix is not one of the known forms.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// The number part of a quantity, split out of the text.
struct Number<'a> {
    negative: bool,
    int_digits: &'a [u8],
    frac_digits: &'a [u8],
    suffix: &'a str,
}

/// What a suffix multiplies the number by: `10^exp10 * 2^exp2`.
struct Scale {
    exp10: i64,
    exp2: u32,
}

impl Quantity {
    pub const ZERO: Quantity = Quantity {
        mantissa: 0,
        exponent: 0,
    };

    /// Parses a quantity such as `100m`, `1.5Gi` or `2e3`.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let number = split_number(s)?;
        let scale = parse_suffix(number.suffix)?;
        let mut digits: Vec<u8> = number
            .int_digits
            .iter()
            .chain(number.frac_digits)
            .map(|d| d - b'0')
            .collect();
        let exp10 = i128::from(scale.exp10) - number.frac_digits.len() as i128;
        Ok(Quantity::from_digits(
            &mut digits,
            exp10,
            scale.exp2,
            number.negative,
        ))
    }

    /// Like Kubernetes' `Quantity.Value()`: the value as a whole number, rounded
    /// away from zero (`0.1` gives `1`, `-1.5` gives `-2`), saturating at the
    /// `i64` bounds.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// Like Kubernetes' `Quantity.MilliValue()`: the value times 1000, rounded away
    /// from zero (`0.1m` gives `1`), saturating at the `i64` bounds.
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// Whether the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// Whether the quantity is zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Whether the quantity has a fractional part (kube's `isFractionalQuantity`).
    pub fn is_fractional(&self) -> bool {
        self.exponent < 0
    }

    /// Kubernetes' `Quantity.AsInt64`: the value when it is a whole number within `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_fractional() {
            return None;
        }
        let scale = 10i128.checked_pow(u32::try_from(self.exponent).ok()?)?;
        i64::try_from(self.mantissa.checked_mul(scale)?).ok()
    }

    /// A whole number (kube's `NewQuantity`).
    pub fn from_i64(value: i64) -> Quantity {
        Quantity::normalized(i128::from(value), 0)
    }

    /// A number of thousandths (kube's `NewMilliQuantity`).
    pub fn from_milli(milli: i64) -> Quantity {
        Quantity::normalized(i128::from(milli), -3)
    }

    /// The exact sum (kube's `Quantity.Add`); `None` when it leaves the 38 digits held
    /// exactly (kube would go on in arbitrary precision; no capacity comes near).
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        if self.mantissa == 0 {
            return Some(*other);
        }
        if other.mantissa == 0 {
            return Some(*self);
        }
        let exponent = self.exponent.min(other.exponent);
        let align = |q: &Quantity| {
            10_i128
                .checked_pow(u32::try_from(q.exponent - exponent).ok()?)
                .and_then(|f| q.mantissa.checked_mul(f))
        };
        let sum = align(self)?.checked_add(align(other)?)?;
        (sum.unsigned_abs() < 10_u128.pow(MAX_DIGITS as u32))
            .then(|| Quantity::normalized(sum, exponent))
    }

    /// The exact difference (kube's `Quantity.Sub`); `None` as for [`Quantity::checked_add`].
    pub fn checked_sub(&self, other: &Quantity) -> Option<Quantity> {
        self.checked_add(&Quantity {
            mantissa: -other.mantissa,
            exponent: other.exponent,
        })
    }

    /// `mantissa * 10^exponent` with the mantissa's trailing zeros moved into the exponent.
    fn normalized(mut mantissa: i128, mut exponent: i32) -> Quantity {
        if mantissa == 0 {
            return Quantity::ZERO;
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        Quantity { mantissa, exponent }
    }

    /// The value divided by `10^scale`, rounded away from zero, saturating.
    fn scaled_value(&self, scale: i32) -> i64 {
        if self.mantissa == 0 {
            return 0;
        }
        let shift = i64::from(self.exponent) - i64::from(scale);
        let scaled = if shift >= 0 {
            u32::try_from(shift)
                .ok()
                .and_then(|s| 10_i128.checked_pow(s))
                .and_then(|factor| self.mantissa.checked_mul(factor))
        } else {
            // The exponent is never below -9, so the divisor is at most 10^(9 + scale).
            let divisor = 10_i128.pow(shift.unsigned_abs() as u32);
            let (quotient, remainder) = (self.mantissa / divisor, self.mantissa % divisor);
            Some(if remainder == 0 {
                quotient
            } else {
                quotient + self.mantissa.signum()
            })
        };
        match scaled {
            Some(v) => i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX }),
            None if self.mantissa < 0 => i64::MIN,
            None => i64::MAX,
        }
    }

    /// Builds a normalized quantity from `digits * 10^exp10 * 2^exp2` (decimal
    /// digits, most significant first), applying Kubernetes' nano rounding and
    /// binary cap.
    fn from_digits(digits: &mut Vec<u8>, exp10: i128, exp2: u32, negative: bool) -> Quantity {
        let leading_zeros = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading_zeros);
        if digits.is_empty() {
            return Quantity::ZERO;
        }
        let mut exp10 = exp10 + strip_trailing_zeros(digits);
        multiply_by_pow2(digits, exp2);
        if exp10 < NANO_EXPONENT {
            round_up_dropping(digits, NANO_EXPONENT - exp10);
            exp10 = NANO_EXPONENT;
        }
        exp10 += strip_trailing_zeros(digits);
        if digits.len() > MAX_DIGITS {
            let dropped = digits.len() - MAX_DIGITS;
            round_up_dropping(digits, dropped as i128);
            exp10 += dropped as i128 + strip_trailing_zeros(digits);
        }
        let magnitude = digits
            .iter()
            .fold(0_i128, |acc, &d| acc * 10 + i128::from(d));
        let exponent = i32::try_from(exp10).unwrap_or(i32::MAX);
        let mut quantity = Quantity {
            mantissa: magnitude,
            exponent,
        };
        if exp2 > 0 && quantity.exceeds_i64() {
            quantity = Quantity {
                mantissa: i128::from(i64::MAX),
                exponent: 0,
            };
        }
        if negative {
            quantity.mantissa = -quantity.mantissa;
        }
        quantity
    }

    /// Whether a non-negative quantity is above `i64::MAX`.
    fn exceeds_i64(&self) -> bool {
        let max = i128::from(i64::MAX);
        match u32::try_from(self.exponent) {
            Ok(exp) => 10_i128
                .checked_pow(exp)
                .and_then(|factor| self.mantissa.checked_mul(factor))
                .is_none_or(|v| v > max),
            // exponent in [-9, -1]: compare against max scaled up instead.
            Err(_) => self.mantissa > max * 10_i128.pow(self.exponent.unsigned_abs()),
        }
    }
}

/// Numeric order (kube's `Quantity.Cmp`): the mantissas compared at the smaller exponent;
/// one too large to scale there is the larger in magnitude.
impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let sign = self.mantissa.signum().cmp(&other.mantissa.signum());
        if sign != Ordering::Equal || self.mantissa == 0 {
            return sign;
        }
        let (hi, lo, flip) = if self.exponent >= other.exponent {
            (self, other, false)
        } else {
            (other, self, true)
        };
        let diff = (hi.exponent - lo.exponent) as u32;
        let ord = match 10i128
            .checked_pow(diff)
            .and_then(|p| hi.mantissa.checked_mul(p))
        {
            Some(scaled) => scaled.cmp(&lo.mantissa),
            None if hi.mantissa > 0 => Ordering::Greater,
            None => Ordering::Less,
        };
        if flip { ord.reverse() } else { ord }
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse(s)
    }
}

/// Splits `s` into sign, digits and suffix, checking the overall shape the way
/// Kubernetes' scanner does (suffix = letters, optional sign, digits).
fn split_number(s: &str) -> Result<Number<'_>, QuantityError> {
    let bytes = s.as_bytes();
    let (negative, rest) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let int_len = count_digits(rest);
    let (int_digits, rest) = rest.split_at(int_len);
    let (frac_digits, rest) = match rest.split_first() {
        Some((b'.', after_dot)) => after_dot.split_at(count_digits(after_dot)),
        _ => (&rest[..0], rest),
    };
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err(QuantityError::FormatWrong);
    }
    let suffix = &s[s.len() - rest.len()..];
    if !suffix_is_well_formed(rest) {
        return Err(QuantityError::FormatWrong);
    }
    Ok(Number {
        negative,
        int_digits,
        frac_digits,
        suffix,
    })
}

fn count_digits(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// `[eEinumkKMGTP]*[-+]?[0-9]*`, the suffix shape from Kubernetes' error message.
fn suffix_is_well_formed(bytes: &[u8]) -> bool {
    let letters = bytes
        .iter()
        .take_while(|b| b"eEinumkKMGTP".contains(b))
        .count();
    let rest = &bytes[letters..];
    let rest = match rest.first() {
        Some(b'-' | b'+') => &rest[1..],
        _ => rest,
    };
    rest.iter().all(u8::is_ascii_digit)
}

/// Interprets a well-formed suffix as a power of ten and a power of two.
fn parse_suffix(suffix: &str) -> Result<Scale, QuantityError> {
    let decimal = |exp10| Ok(Scale { exp10, exp2: 0 });
    let binary = |exp2| Ok(Scale { exp10: 0, exp2 });
    match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => match suffix.strip_prefix(['e', 'E']) {
            Some(exp) => exp
                .parse::<i64>()
                .map(|exp10| Scale { exp10, exp2: 0 })
                .map_err(|_| QuantityError::Suffix),
            None => Err(QuantityError::Suffix),
        },
    }
}

/// Removes trailing zero digits, returning how many were removed.
fn strip_trailing_zeros(digits: &mut Vec<u8>) -> i128 {
    let zeros = digits.iter().rev().take_while(|&&d| d == 0).count();
    // Keep at least one digit; callers only pass non-zero numbers.
    let zeros = zeros.min(digits.len().saturating_sub(1));
    digits.truncate(digits.len() - zeros);
    zeros as i128
}

/// `digits *= 2^exp2`, exactly (`exp2 <= 60`).
fn multiply_by_pow2(digits: &mut Vec<u8>, exp2: u32) {
    if exp2 == 0 {
        return;
    }
    let factor = 1_u128 << exp2;
    let mut carry = 0_u128;
    for d in digits.iter_mut().rev() {
        let t = u128::from(*d) * factor + carry;
        *d = (t % 10) as u8;
        carry = t / 10;
    }
    let mut head = Vec::new();
    while carry > 0 {
        head.push((carry % 10) as u8);
        carry /= 10;
    }
    head.reverse();
    digits.splice(0..0, head);
}

/// Drops the last `count` digits, rounding the rest away from zero if any dropped
/// digit was non-zero. Dropping every digit of a non-zero number leaves `1`.
fn round_up_dropping(digits: &mut Vec<u8>, count: i128) {
    let keep = usize::try_from(digits.len() as i128 - count).unwrap_or(0);
    let inexact = digits[keep..].iter().any(|&d| d != 0);
    digits.truncate(keep);
    if !inexact {
        return;
    }
    for d in digits.iter_mut().rev() {
        if *d == 9 {
            *d = 0;
        } else {
            *d += 1;
            return;
        }
    }
    digits.insert(0, 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (input, value(), milli_value(), is_negative())
    const ACCEPTED: &[(&str, i64, i64, bool)] = &[
        ("0", 0, 0, false),
        ("-0", 0, 0, false),
        ("+0.0", 0, 0, false),
        ("1", 1, 1000, false),
        ("+1", 1, 1000, false),
        ("-1", -1, -1000, true),
        ("100m", 1, 100, false),
        ("1.5", 2, 1500, false),
        ("-1.5", -2, -1500, true),
        (".5", 1, 500, false),
        ("5.", 5, 5000, false),
        ("0.1m", 1, 1, false),
        ("1n", 1, 1, false),
        ("1u", 1, 1, false),
        ("999u", 1, 1, false),
        ("1001u", 1, 2, false),
        ("2k", 2000, 2_000_000, false),
        ("1M", 1_000_000, 1_000_000_000, false),
        ("3G", 3_000_000_000, 3_000_000_000_000, false),
        ("1T", 1_000_000_000_000, 1_000_000_000_000_000, false),
        (
            "1P",
            1_000_000_000_000_000,
            1_000_000_000_000_000_000,
            false,
        ),
        ("1E", 1_000_000_000_000_000_000, i64::MAX, false),
        ("10E", i64::MAX, i64::MAX, false),
        ("-10E", i64::MIN, i64::MIN, true),
        ("1Ki", 1024, 1_024_000, false),
        ("500Mi", 524_288_000, 524_288_000_000, false),
        ("32Gi", 34_359_738_368, 34_359_738_368_000, false),
        ("1.5Gi", 1_610_612_736, 1_610_612_736_000, false),
        ("0.5Ki", 512, 512_000, false),
        ("1Ti", 1_099_511_627_776, 1_099_511_627_776_000, false),
        (
            "1Pi",
            1_125_899_906_842_624,
            1_125_899_906_842_624_000,
            false,
        ),
        ("7Ei", 8_070_450_532_247_928_832, i64::MAX, false),
        ("8Ei", i64::MAX, i64::MAX, false),
        ("-8Ei", -i64::MAX, i64::MIN, true),
        ("1e3", 1000, 1_000_000, false),
        ("1E3", 1000, 1_000_000, false),
        ("1e+3", 1000, 1_000_000, false),
        ("2E-3", 1, 2, false),
        ("1.5e1", 15, 15_000, false),
        ("1e-10", 1, 1, false),
        ("1e-999999999", 1, 1, false),
        ("-1e-999999999", -1, -1, true),
        ("1e999999999", i64::MAX, i64::MAX, false),
        ("-1e999999999", i64::MIN, i64::MIN, true),
        ("9223372036854775807", i64::MAX, i64::MAX, false),
        ("9223372036854775808", i64::MAX, i64::MAX, false),
        ("00012", 12, 12_000, false),
        ("12.000", 12, 12_000, false),
        ("1.G", 1_000_000_000, 1_000_000_000_000, false),
        (
            "123456789012345678901234567890123456789012345",
            i64::MAX,
            i64::MAX,
            false,
        ),
    ];

    const REJECTED: &[(&str, QuantityError)] = &[
        ("", QuantityError::FormatWrong),
        ("1.2.3", QuantityError::FormatWrong),
        ("Mi", QuantityError::FormatWrong),
        ("1 Gi", QuantityError::FormatWrong),
        (" 1", QuantityError::FormatWrong),
        ("1 ", QuantityError::FormatWrong),
        ("1KiB", QuantityError::FormatWrong),
        ("0x10", QuantityError::FormatWrong),
        ("-", QuantityError::FormatWrong),
        ("+", QuantityError::FormatWrong),
        (".", QuantityError::FormatWrong),
        ("1+1.0M", QuantityError::FormatWrong),
        ("1.1.M", QuantityError::FormatWrong),
        ("1e3.5", QuantityError::FormatWrong),
        ("--1", QuantityError::FormatWrong),
        ("aoeu", QuantityError::FormatWrong),
        ("1e", QuantityError::Suffix),
        ("1E+", QuantityError::Suffix),
        ("-3.01e-", QuantityError::Suffix),
        ("1ki", QuantityError::Suffix),
        ("0.1mi", QuantityError::Suffix),
        (".5i", QuantityError::Suffix),
        ("1i", QuantityError::Suffix),
        ("1K", QuantityError::Suffix),
        ("1Ki5", QuantityError::Suffix),
        ("1ee3", QuantityError::Suffix),
        ("1e99999999999999999999", QuantityError::Suffix),
    ];

    #[test]
    fn table_of_accepted_quantities() {
        for &(input, value, milli, negative) in ACCEPTED {
            let q = Quantity::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(q.value(), value, "value of {input:?}");
            assert_eq!(q.milli_value(), milli, "milli_value of {input:?}");
            assert_eq!(q.is_negative(), negative, "is_negative of {input:?}");
        }
    }

    #[test]
    fn table_of_rejected_quantities() {
        for (input, err) in REJECTED {
            assert_eq!(Quantity::parse(input).as_ref(), Err(err), "{input:?}");
        }
    }

    #[test]
    fn error_messages_are_kubernetes_wording() {
        assert_eq!(
            QuantityError::FormatWrong.to_string(),
            "quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
        assert_eq!(
            QuantityError::Suffix.to_string(),
            "unable to parse quantity's suffix"
        );
    }

    #[test]
    fn equality_is_numeric() {
        let q = |s: &str| s.parse::<Quantity>().unwrap();
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(q("1k"), q("1e3"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1.5Gi"), q("1536Mi"));
        assert_eq!(q("0"), q("-0.0Ei"));
        assert_eq!(q("0.1n"), q("1n"));
        assert_ne!(q("1"), q("1001m"));
        assert_ne!(q("1e999999999"), q("1e999999998"));
    }

    #[test]
    fn binary_suffix_is_exact() {
        let q = Quantity::parse("1.5Gi").unwrap();
        assert_eq!(q.value(), 1_610_612_736);
        let q = Quantity::parse("0.001Ki").unwrap();
        assert_eq!(q.milli_value(), 1024);
        let q = Quantity::parse("0.0000000001Ki").unwrap();
        assert_eq!(q.milli_value(), 1, "1.024e-7 rounds up to 103n, then to 1m");
    }

    fn ceil_div(n: i128, d: i128) -> i128 {
        let q = n / d;
        if n % d == 0 { q } else { q + n.signum() }
    }

    fn clamp_i64(v: i128) -> i64 {
        v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    const DECIMAL_SUFFIXES: &[(&str, i32)] = &[
        ("n", -9),
        ("u", -6),
        ("m", -3),
        ("", 0),
        ("k", 3),
        ("M", 6),
        ("G", 9),
        ("T", 12),
        ("P", 15),
        ("E", 18),
    ];

    /// value * 10^exp10, rounded away from zero at whole units and milli-units.
    fn expected_decimal(n: i64, exp10: i32) -> (i64, i64) {
        let n = i128::from(n);
        let scaled = |unit_exp: i32| {
            let shift = exp10 - unit_exp;
            if shift >= 0 {
                n.checked_mul(10_i128.pow(shift as u32))
                    .map_or(if n < 0 { i64::MIN } else { i64::MAX }, clamp_i64)
            } else {
                clamp_i64(ceil_div(n, 10_i128.pow((-shift) as u32)))
            }
        };
        (scaled(0), scaled(-3))
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in any::<String>()) {
            let _ = Quantity::parse(&s);
        }

        #[test]
        fn parse_never_panics_on_quantity_like_text(s in "[-+]?[0-9.]{0,30}[eEinumkKMGTP+-]{0,3}[0-9]{0,12}") {
            if let Ok(q) = Quantity::parse(&s) {
                let _ = (q.value(), q.milli_value(), q.is_negative());
            }
        }

        #[test]
        fn integers_round_trip_with_decimal_suffixes(n in any::<i64>(), i in 0..DECIMAL_SUFFIXES.len()) {
            let (suffix, exp10) = DECIMAL_SUFFIXES[i];
            let q = Quantity::parse(&format!("{n}{suffix}")).unwrap();
            prop_assert_eq!((q.value(), q.milli_value()), expected_decimal(n, exp10));
            prop_assert_eq!(q.is_negative(), n < 0);
        }

        #[test]
        fn integers_round_trip_with_binary_suffixes(n in any::<i64>(), k in 1_u32..=6) {
            let suffix = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][(k - 1) as usize];
            let q = Quantity::parse(&format!("{n}{suffix}")).unwrap();
            // Kubernetes caps binary quantities at 2^63 - 1 in magnitude.
            let cap = i128::from(i64::MAX);
            let exact = (i128::from(n) << (10 * k)).clamp(-cap, cap);
            prop_assert_eq!(q.value(), exact as i64);
            prop_assert_eq!(q.milli_value(), clamp_i64(exact * 1000));
        }

        #[test]
        fn integers_round_trip_with_exponents(n in any::<i64>(), e in -30_i32..=30) {
            let q = Quantity::parse(&format!("{n}e{e}")).unwrap();
            prop_assert_eq!((q.value(), q.milli_value()), expected_decimal(n, e));
        }

        #[test]
        fn fractions_match_integer_milli_values(whole in 0_i64..1_000_000_000, frac in 0_u32..1000) {
            let q = Quantity::parse(&format!("{whole}.{frac:03}")).unwrap();
            prop_assert_eq!(q.milli_value(), whole * 1000 + i64::from(frac));
            prop_assert_eq!(q, Quantity::parse(&format!("{}m", whole * 1000 + i64::from(frac))).unwrap());
        }
    }
}

#[cfg(test)]
mod order_tests {
    use super::Quantity;
    use std::cmp::Ordering::{Equal, Greater, Less};

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    /// Numeric order across suffixes and formats, as kube's `Quantity.Cmp`
    /// (staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go); pairs chosen here.
    #[test]
    fn quantities_order_by_value() {
        for (a, b, want) in [
            ("1", "1", Equal),
            ("1Gi", "1G", Greater),
            ("1000m", "1", Equal),
            ("1k", "1Ki", Less),
            ("-1", "0", Less),
            ("-1", "-2", Greater),
            ("0", "0m", Equal),
            ("1n", "1u", Less),
            ("9E", "1n", Greater),
            ("-9E", "1n", Less),
            ("10G", "10Gi", Less),
            ("1.5", "1500m", Equal),
        ] {
            assert_eq!(q(a).cmp(&q(b)), want, "{a} vs {b}");
            assert_eq!(q(b).cmp(&q(a)), want.reverse(), "{b} vs {a}");
        }
    }
}

#[cfg(test)]
mod arithmetic_tests {
    use super::Quantity;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    /// Sums and differences are exact across suffixes (kube's `Quantity.Add`/`Sub`, as
    /// consumable capacity adds up shares of a device); pairs chosen here.
    #[test]
    fn sums_and_differences_are_exact() {
        for (a, b, sum, diff) in [
            ("2500M", "2500M", "5G", "0"),
            ("10G", "1", "10000000001", "9999999999"),
            ("1Gi", "1Mi", "1074790400", "1072693248"),
            ("1.5", "250m", "1750m", "1250m"),
            ("1n", "1", "1000000001n", "-999999999n"),
            ("0", "3k", "3000", "-3k"),
        ] {
            assert_eq!(q(a).checked_add(&q(b)), Some(q(sum)), "{a} + {b}");
            assert_eq!(q(a).checked_sub(&q(b)), Some(q(diff)), "{a} - {b}");
        }
        assert!(q("2500M").checked_sub(&q("2500M")).unwrap().is_zero());
        assert_eq!(
            q("1e37").checked_add(&q("1n")),
            None,
            "beyond 38 exact digits"
        );
    }

    #[test]
    fn constructors_match_parsed_forms() {
        assert_eq!(Quantity::from_i64(2_500_000_000), q("2500M"));
        assert_eq!(Quantity::from_milli(1500), q("1.5"));
        assert_eq!(Quantity::from_milli(-7), q("-7m"));
        assert!(q("1500m").is_fractional() && !q("2k").is_fractional());
    }
}
