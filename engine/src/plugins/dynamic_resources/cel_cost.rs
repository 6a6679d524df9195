//! kube's validation of a DRA CEL selector as the API server stores it
//! (`pkg/apis/resource/validation/validation.go`, `validateCELExpression`, v1.37.2): at most
//! `CELSelectorExpressionMaxLength` bytes, an expression that compiles in the DRA
//! environment, and a worst-case cost no higher than `CELSelectorExpressionMaxCost`.
//!
//! # The cost estimate
//!
//! kube takes the worst case from cel-go's static estimator (`checker/cost.go`): every step
//! has a price, and a comprehension (`all`, `exists`, `map`, `filter`, …) pays for its body
//! once per element of the largest collection its range can be. Here the same shape, over
//! the parsed expression:
//!
//! - an identifier or field selection costs 1, a literal 0; a list literal 10 plus its
//!   elements, a map literal 30 plus its entries (cel-go's `ListCreateBaseCost`,
//!   `MapCreateBaseCost`);
//! - a call costs 1 plus its arguments and receiver; string functions that walk their
//!   operand (`contains`, `startsWith`, `endsWith`, `matches`, `find`, `findAll`, `split`,
//!   `lowerAscii`, `upperAscii`, `replace`, `indexOf`, `lastIndexOf`) cost a tenth of the
//!   longest string they can see (cel-go's `StringTraversalCostFactor`);
//! - a comprehension costs its range, its accumulator's start and its result, plus, per
//!   element, its loop condition and step. The element count is the literal's length for a
//!   list literal, and otherwise the largest a device allows: 32 attributes and capacities
//!   per device (`ResourceSliceMaxAttributesAndCapacitiesPerDevice`).
//!
//! Strings read from a device are at most 64 bytes (`DeviceAttributeMaxValueLength`);
//! string literals are their own length. This follows cel-go where the price is large (loops
//! over loops, the case kube's limit exists for: seven nested `all` over ten elements is
//! 10^7 steps) and may differ from it by small constants elsewhere, far below the limit.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

/// kube's `CELSelectorExpressionMaxLength` (bytes).
pub(crate) const CEL_SELECTOR_MAX_LENGTH: usize = 10 * 1024;
/// kube's `CELSelectorExpressionMaxCost`.
pub(crate) const CEL_SELECTOR_MAX_COST: u64 = 1_000_000;

/// The most elements a collection from a device holds.
const DEVICE_COLLECTION_MAX: u64 = 32;
/// The longest string a device's attribute holds.
const DEVICE_STRING_MAX: u64 = 64;

/// What a sub-expression costs, and the largest size (elements, or bytes for a string) its
/// value can have.
#[derive(Clone, Copy)]
struct Est {
    cost: u64,
    size: u64,
}

impl Est {
    fn new(cost: u64, size: u64) -> Est {
        Est { cost, size }
    }
}

/// The worst-case cost of `expr` (saturating).
pub(crate) fn estimate(expr: &IdedExpr) -> u64 {
    walk(&expr.expr).cost
}

fn walk(e: &Expr) -> Est {
    match e {
        Expr::Unspecified => Est::new(0, 0),
        Expr::Literal(LiteralValue::String(s)) => Est::new(0, s.inner().len() as u64),
        Expr::Literal(_) => Est::new(0, 1),
        Expr::Ident(_) => Est::new(1, DEVICE_COLLECTION_MAX.max(DEVICE_STRING_MAX)),
        Expr::Select(s) => {
            let o = walk(&s.operand.expr);
            Est::new(o.cost.saturating_add(1), o.size)
        }
        Expr::List(l) => {
            let cost = l
                .elements
                .iter()
                .fold(10u64, |c, x| c.saturating_add(walk(&x.expr).cost));
            Est::new(cost, l.elements.len() as u64)
        }
        Expr::Map(m) => entries(30, &m.entries),
        Expr::Struct(s) => entries(40, &s.entries),
        Expr::Call(c) => {
            let parts: Vec<Est> = c
                .target
                .iter()
                .map(|t| walk(&t.expr))
                .chain(c.args.iter().map(|a| walk(&a.expr)))
                .collect();
            let longest = parts.iter().map(|p| p.size).max().unwrap_or(0);
            let own = if walks_strings(&c.func_name) {
                1 + longest.div_ceil(10)
            } else {
                1
            };
            let cost = parts.iter().fold(own, |acc, p| acc.saturating_add(p.cost));
            Est::new(cost, longest)
        }
        Expr::Comprehension(c) => {
            let range = walk(&c.iter_range.expr);
            let n = match &c.iter_range.expr {
                Expr::List(l) => l.elements.len() as u64,
                _ => range.size.min(DEVICE_COLLECTION_MAX),
            };
            let per = walk(&c.loop_cond.expr)
                .cost
                .saturating_add(walk(&c.loop_step.expr).cost);
            let cost = range
                .cost
                .saturating_add(walk(&c.accu_init.expr).cost)
                .saturating_add(walk(&c.result.expr).cost)
                .saturating_add(n.saturating_mul(per));
            Est::new(cost, n)
        }
    }
}

fn entries(base: u64, es: &[cel::common::ast::IdedEntryExpr]) -> Est {
    let cost = es.iter().fold(base, |c, e| {
        let (k, v) = match &e.expr {
            EntryExpr::MapEntry(m) => (walk(&m.key.expr).cost, walk(&m.value.expr).cost),
            EntryExpr::StructField(f) => (0, walk(&f.value.expr).cost),
        };
        c.saturating_add(k).saturating_add(v)
    });
    Est::new(cost, es.len() as u64)
}

/// String functions whose price grows with the string (cel-go's traversal cost).
fn walks_strings(f: &str) -> bool {
    matches!(
        f,
        "contains"
            | "startsWith"
            | "endsWith"
            | "matches"
            | "find"
            | "findAll"
            | "split"
            | "lowerAscii"
            | "upperAscii"
            | "replace"
            | "indexOf"
            | "lastIndexOf"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(src: &str) -> u64 {
        estimate(cel::Program::compile(src).unwrap().expression())
    }

    /// Provenance: kubernetes/kubernetes
    /// staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go (v1.37.2), case
    /// `expensive`: kube's validation refuses it as too complex.
    #[test]
    fn kubes_expensive_case_exceeds_the_limit() {
        let ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
        let src = format!(
            "{ten}.all(x, {ten}.all(y, {ten}.all(z, {ten}.all(z2, {ten}.all(z3, {ten}.all(z4, \
             {ten}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
        );
        assert!(cost(&src) > CEL_SELECTOR_MAX_COST, "{}", cost(&src));
    }

    /// Every selector of kube's scheduler_perf DRA configs is far below the limit.
    #[test]
    fn ordinary_selectors_are_cheap() {
        for src in [
            "device.driver == \"test-driver.cdi.k8s.io\"",
            "device.attributes[\"test-driver.cdi.k8s.io\"].model == \"a100\" && \
             device.capacity[\"test-driver.cdi.k8s.io\"].memory.compareTo(quantity(\"40Gi\")) >= 0",
            "device.attributes[\"d\"].name.startsWith(\"gpu-\")",
            "device.attributes.exists(d, d == \"x\")",
        ] {
            let c = cost(src);
            assert!(c < 1_000, "{src}: {c}");
        }
    }

    /// Loops multiply: one loop over a device's attributes inside another is 32 times one.
    #[test]
    fn nested_loops_multiply_their_bodies() {
        let one = cost("device.attributes.all(a, a.startsWith(\"x\"))");
        let two = cost("device.attributes.all(a, device.attributes.all(b, b.startsWith(\"x\")))");
        assert!(two >= one * DEVICE_COLLECTION_MAX / 2, "{one} {two}");
    }
}
