//! DRA device selectors in CEL (kube v1.37.2 `k8s.io/dynamic-resource-allocation/cel`,
//! `compile.go`), on the `cel` crate (research: `docs/dra/cel-crate-evaluation.md`).
//!
//! # The environment
//!
//! One variable, `device`, with the fields kube's stored-expressions environment declares
//! (every field always exists, whatever the gates):
//! - `driver` (string), `allowMultipleAllocations` (bool);
//! - `attributes`: domain → name → value (int, bool, string, `semver` for a version, lists
//!   of those); a name without a domain is under the device's driver;
//! - `capacity`: domain → name → `quantity`.
//!
//! A domain the device lacks reads as an empty map (`"x" in device.attributes["d"]` is
//! false), as kube's `newStringInterfaceMapWithDefault`; a missing attribute is a runtime
//! error `no such key: <name>`, which fails the claim's allocation (kube returns it as the
//! allocator's error). Functions beyond CEL's standard library: kube's quantity library
//! (`quantity`, `isQuantity`, `isGreaterThan`, `isLessThan`, `compareTo`), its semver library
//! (`semver`, `isGreaterThan`, `isLessThan`, `compareTo`, `major`), and the strings and lists
//! extensions.
//!
//! # Protocol
//!
//! [`CelSelectors`] compiles each expression once (kube's `cel.Cache`) and keeps the
//! program, or the compile error, for every later evaluation, with the expression's column
//! form where it has one ([`super::cel_columns`]: plain selectors read a slice's attribute
//! columns; the interpreter answers wherever that form does not). A result that is not a
//! bool is an error, as in kube.
//!
//! kube's cost limit (1,000,000) is enforced where kube's API server enforces it first, on the
//! worst-case estimate of a stored selector ([`super::cel_cost`], `validate_cel_selector`);
//! an expression within it cannot exceed it at run time. Not modelled yet: kube's static type check (a type error shows
//! when the branch runs, not at compile time); the rest of kube's libraries (sets, regex
//! `find`, two-variable comprehensions, URL/IP/CIDR).

use super::allocator::SelectorEval;
use super::cel_columns::ColumnProgram;
use crate::api::dra::{AttributeValue, Device, ResourceSlice};
use crate::api::{Quantity, Sym};
use ahash::AHashMap;
use cel::common::traits::{Container, Indexer, Iterable, Sizer};
use cel::common::types::{self, CelBool, CelInt, CelList, CelMap, CelMapKey, CelString, Type};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError, Program, Value};
use parking_lot::Mutex;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");
static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");
static DEVICE_TYPE: Type = Type::new_unspecified_type("kubernetes.DRADevice");

/// A `quantity` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Q(Quantity);

impl Val for Q {
    fn get_type(&self) -> &Type {
        &QUANTITY_TYPE
    }
    fn cel_type() -> &'static Type {
        &QUANTITY_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Q>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Q {}

/// A `semver` value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SemVer(semver::Version);

impl Val for SemVer {
    fn get_type(&self) -> &Type {
        &SEMVER_TYPE
    }
    fn cel_type() -> &'static Type {
        &SEMVER_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<SemVer>()
            .is_some_and(|o| o.0.cmp_precedence(&self.0).is_eq())
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for SemVer {}

type R<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

fn arg<'a, T: Val + StaticVal>(v: &'a CowVal<'_, '_>, f: &str) -> Result<&'a T, ExecutionError> {
    v.downcast_ref::<T>().ok_or_else(|| {
        ExecutionError::function_error(f, format!("unexpected {}", v.get_type().name()))
    })
}

fn str_arg<'a>(v: &'a CowVal<'_, '_>, f: &str) -> Result<&'a str, ExecutionError> {
    v.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| ExecutionError::function_error(f, "expected string"))
}

fn boolean<'b, 'v>(b: bool) -> R<'b, 'v> {
    Ok(CowVal::owned(CelBool::from(b)))
}

fn ordering<'b, 'v>(o: std::cmp::Ordering) -> R<'b, 'v> {
    Ok(CowVal::owned(CelInt::from(o as i64)))
}

fn f_quantity<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let q = Quantity::parse(str_arg(&a[0], "quantity")?)
        .map_err(|e| ExecutionError::function_error("quantity", e.to_string()))?;
    Ok(CowVal::owned(Q(q)))
}

fn f_is_quantity<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    boolean(Quantity::parse(str_arg(&a[0], "isQuantity")?).is_ok())
}

fn q2(a: &[CowVal<'_, '_>], f: &str) -> Result<(Quantity, Quantity), ExecutionError> {
    Ok((arg::<Q>(&a[0], f)?.0, arg::<Q>(&a[1], f)?.0))
}

fn f_q_gt<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = q2(&a, "isGreaterThan")?;
    boolean(x > y)
}

fn f_q_lt<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = q2(&a, "isLessThan")?;
    boolean(x < y)
}

fn f_q_cmp<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = q2(&a, "compareTo")?;
    ordering(x.cmp(&y))
}

fn parse_semver(s: &str) -> Result<SemVer, String> {
    semver::Version::parse(s)
        .map(SemVer)
        .map_err(|e| e.to_string())
}

fn f_semver<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let v = parse_semver(str_arg(&a[0], "semver")?)
        .map_err(|e| ExecutionError::function_error("semver", e))?;
    Ok(CowVal::owned(v))
}

fn s2<'a>(a: &'a [CowVal<'_, '_>], f: &str) -> Result<(&'a SemVer, &'a SemVer), ExecutionError> {
    Ok((arg::<SemVer>(&a[0], f)?, arg::<SemVer>(&a[1], f)?))
}

fn f_s_gt<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = s2(&a, "isGreaterThan")?;
    boolean(x.0.cmp_precedence(&y.0).is_gt())
}

fn f_s_lt<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = s2(&a, "isLessThan")?;
    boolean(x.0.cmp_precedence(&y.0).is_lt())
}

fn f_s_cmp<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    let (x, y) = s2(&a, "compareTo")?;
    ordering(x.0.cmp_precedence(&y.0))
}

fn f_s_major<'b, 'v>(a: Vec<CowVal<'b, 'v>>) -> R<'b, 'v> {
    Ok(CowVal::owned(CelInt::from(
        arg::<SemVer>(&a[0], "major")?.0.major as i64,
    )))
}

/// The environment of the module doc.
fn build_env() -> Result<Env, String> {
    let mut env = Env::stdlib();
    fn e<E: std::fmt::Display>(r: Result<(), E>) -> Result<(), String> {
        r.map_err(|e| e.to_string())
    }
    env.add_extension(cel::extensions::strings)
        .map_err(|e| e.to_string())?;
    env.add_extension(cel::extensions::lists)
        .map_err(|e| e.to_string())?;
    env.add_type(QUANTITY_TYPE.to_owned())
        .map_err(|e| e.to_string())?;
    env.add_type(SEMVER_TYPE.to_owned())
        .map_err(|e| e.to_string())?;
    let q = || QUANTITY_TYPE.to_owned();
    let s = || SEMVER_TYPE.to_owned();
    e(env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![types::STRING_TYPE],
        f_quantity,
    ))?;
    e(env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![types::STRING_TYPE],
        f_is_quantity,
    ))?;
    e(env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        q(),
        vec![q()],
        f_q_gt,
    ))?;
    e(env.add_member_overload(
        "isLessThan",
        "quantity_is_less_than",
        q(),
        vec![q()],
        f_q_lt,
    ))?;
    e(env.add_member_overload("compareTo", "quantity_compare_to", q(), vec![q()], f_q_cmp))?;
    e(env.add_overload(
        "semver",
        "string_to_semver",
        vec![types::STRING_TYPE],
        f_semver,
    ))?;
    e(env.add_member_overload(
        "isGreaterThan",
        "semver_is_greater_than",
        s(),
        vec![s()],
        f_s_gt,
    ))?;
    e(env.add_member_overload("isLessThan", "semver_is_less_than", s(), vec![s()], f_s_lt))?;
    e(env.add_member_overload("compareTo", "semver_compare_to", s(), vec![s()], f_s_cmp))?;
    e(env.add_member_overload("major", "semver_major", s(), vec![], f_s_major))?;
    Ok(env)
}

static EMPTY_MAP: LazyLock<CelMap<'static>> = LazyLock::new(CelMap::default);

/// `device.attributes` and `device.capacity`: a missing domain reads as an empty map.
#[derive(Debug, Clone)]
struct DomainMap(CelMap<'static>);

impl Val for DomainMap {
    fn get_type(&self) -> &Type {
        &types::MAP_TYPE
    }
    fn cel_type() -> &'static Type {
        &types::MAP_TYPE
    }
    fn as_container(&self) -> Option<&dyn Container> {
        Some(self)
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
    where
        Self: 'v,
    {
        self.0.as_iterable()
    }
    fn as_sizer(&self) -> Option<&dyn Sizer> {
        self.0.as_sizer()
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Container for DomainMap {
    fn contains(&self, key: &dyn Val) -> Result<bool, ExecutionError> {
        match self.0.as_container() {
            Some(c) => c.contains(key),
            None => Ok(false),
        }
    }
}

impl Indexer for DomainMap {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let Some(inner) = self.0.as_indexer() else {
            return Ok(CowVal::Borrowed(&*EMPTY_MAP));
        };
        match inner.get(idx) {
            Err(ExecutionError::NoSuchKey(_)) => Ok(CowVal::Borrowed(&*EMPTY_MAP)),
            r => r,
        }
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(|v| v.as_ref().clone_as_boxed())
    }
}

/// The `device` value, built once per device (kept in its `cel_value` slot).
#[derive(Debug, Clone)]
struct DeviceVal {
    driver: CelString<'static>,
    multi: CelBool,
    attributes: DomainMap,
    capacity: DomainMap,
}

impl Val for DeviceVal {
    fn get_type(&self) -> &Type {
        &DEVICE_TYPE
    }
    fn cel_type() -> &'static Type {
        &DEVICE_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Indexer for DeviceVal {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match idx.downcast_ref::<CelString>().map(|s| s.inner()) {
            Some("driver") => Ok(CowVal::Borrowed(&self.driver)),
            Some("allowMultipleAllocations") => Ok(CowVal::Borrowed(&self.multi)),
            Some("attributes") => Ok(CowVal::Borrowed(&self.attributes)),
            Some("capacity") => Ok(CowVal::Borrowed(&self.capacity)),
            Some(f) => Err(ExecutionError::no_such_key(f)),
            None => Err(ExecutionError::no_such_key("?")),
        }
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(|v| v.as_ref().clone_as_boxed())
    }
}

fn list(items: impl Iterator<Item = Box<dyn Val>>) -> Box<dyn Val> {
    Box::new(CelList::from(items.collect::<Vec<_>>()))
}

fn attribute_val(a: &AttributeValue) -> Result<Box<dyn Val>, String> {
    use AttributeValue as A;
    let string = |s: &str| Box::new(CelString::from(s.to_string())) as Box<dyn Val>;
    Ok(match a {
        A::Int(i) => Box::new(CelInt::from(*i)),
        A::Bool(b) => Box::new(CelBool::from(*b)),
        A::String(s) => string(s),
        A::Version(v) => Box::new(parse_semver(v)?),
        A::Ints(v) => list(v.iter().map(|i| Box::new(CelInt::from(*i)) as Box<dyn Val>)),
        A::Bools(v) => list(
            v.iter()
                .map(|b| Box::new(CelBool::from(*b)) as Box<dyn Val>),
        ),
        A::Strings(v) => list(v.iter().map(|s| string(s))),
        A::Versions(v) => {
            let vs = v
                .iter()
                .map(|s| parse_semver(s).map(|x| Box::new(x) as Box<dyn Val>))
                .collect::<Result<Vec<_>, _>>()?;
            list(vs.into_iter())
        }
    })
}

/// Qualified names (`domain/name`) grouped by domain.
fn group<'a>(entries: impl Iterator<Item = (&'a str, Box<dyn Val>)>) -> DomainMap {
    let mut domains: HashMap<String, HashMap<CelMapKey<'static>, Box<dyn Val>>> = HashMap::new();
    for (name, v) in entries {
        let (domain, id) = name.split_once('/').unwrap_or(("", name));
        domains
            .entry(domain.to_string())
            .or_default()
            .insert(CelMapKey::from(id.to_string()), v);
    }
    DomainMap(CelMap::from(
        domains
            .into_iter()
            .map(|(d, m)| {
                (
                    CelMapKey::from(d),
                    Box::new(CelMap::from(m)) as Box<dyn Val>,
                )
            })
            .collect::<HashMap<_, _>>(),
    ))
}

fn device_val(driver: Sym, d: &Device) -> Result<DeviceVal, String> {
    let attrs = d
        .attributes
        .iter()
        .map(|(n, a)| attribute_val(a).map(|v| (&**n, v)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DeviceVal {
        driver: CelString::from(driver.to_string()),
        multi: CelBool::from(d.allow_multiple_allocations),
        attributes: group(attrs.into_iter()),
        capacity: group(
            d.capacity
                .iter()
                .map(|(n, q)| (&**n, Box::new(Q(*q)) as Box<dyn Val>)),
        ),
    })
}

struct DeviceResolver<'a>(&'a DeviceVal);

impl VariableResolver for DeviceResolver<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        (variable == "device").then(|| CowVal::Borrowed(self.0 as &dyn Val))
    }
}

/// kube's error texts start in lower case (`no such key: model`).
fn kube_message(e: &ExecutionError) -> String {
    let s = e.to_string();
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_lowercase().chain(c).collect(),
        None => s,
    }
}

/// A compiled program, or the compile error.
type Compiled = Result<Arc<Program>, String>;

/// One expression, compiled: the program, and its column form where it has one
/// ([`ColumnProgram`]; only for an expression that compiles).
#[derive(Clone)]
pub(crate) struct Selector {
    pub(crate) program: Compiled,
    pub(crate) columns: Option<Arc<ColumnProgram>>,
}

/// Compiled selectors, each compiled once (module doc).
pub(crate) struct CelSelectors {
    env: Arc<Env>,
    programs: Mutex<AHashMap<Arc<str>, Selector>>,
}

impl CelSelectors {
    pub(crate) fn new() -> CelSelectors {
        CelSelectors {
            env: Arc::new(build_env().expect("the DRA CEL environment is well formed")),
            programs: Mutex::new(AHashMap::new()),
        }
    }

    /// `expression` compiled, on first use.
    pub(crate) fn selector(&self, expression: &str) -> Selector {
        if let Some(p) = self.programs.lock().get(expression) {
            return p.clone();
        }
        let program = self
            .env
            .compile(expression)
            .map(Arc::new)
            .map_err(|e| format!("compilation failed: {e}"));
        let columns = match program {
            Ok(_) => ColumnProgram::compile(expression).map(Arc::new),
            Err(_) => None,
        };
        let s = Selector { program, columns };
        self.programs
            .lock()
            .insert(Arc::from(expression), s.clone());
        s
    }

    /// The program of `expression`, compiled on first use; `Err` with the compile error.
    pub(crate) fn compile(&self, expression: &str) -> Result<Arc<Program>, String> {
        self.selector(expression).program
    }

    /// `expression` on `device` by the interpreter alone.
    pub(crate) fn interpret(
        &self,
        expression: &str,
        driver: Sym,
        device: &Device,
    ) -> Result<bool, String> {
        let program = self
            .compile(expression)
            .map_err(|e| format!("CEL compile error: {e}"))?;
        self.run(&program, driver, device)
    }

    fn run(&self, program: &Program, driver: Sym, device: &Device) -> Result<bool, String> {
        // Built once per device, shared by every expression evaluated on it.
        let value = (device.cel_value)
            .get_or_init(|| device_val(driver, device))
            .expect("the slot holds the CEL value only");
        let value = value.as_ref().map_err(Clone::clone)?;
        let resolver = DeviceResolver(value);
        let mut ctx = Context::with_env(Arc::clone(&self.env));
        ctx.set_variable_resolver(&resolver);
        match program.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(v) => Err(format!(
                "CEL runtime error: expression must evaluate to a bool, got {v:?}"
            )),
            Err(e) => Err(format!("CEL runtime error: {}", kube_message(&e))),
        }
    }
}

impl SelectorEval for CelSelectors {
    /// Over the slice's columns where the expression has a column form and the device an
    /// answer there; by the interpreter otherwise.
    fn matches(
        &self,
        expression: &str,
        slice: &ResourceSlice,
        index: usize,
    ) -> Result<bool, String> {
        let s = self.selector(expression);
        let program = s.program.map_err(|e| format!("CEL compile error: {e}"))?;
        if let Some(b) = s.columns.and_then(|c| c.eval_row(slice, index)) {
            return Ok(b);
        }
        self.run(&program, slice.driver, &slice.devices[index])
    }
}

#[cfg(test)]
mod tests {
    //! Ported from kubernetes/kubernetes
    //! staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go (v1.37.2, the
    //! `testcases` table of `TestCEL`), the cases this environment covers. Left out:
    //! `type-error` (no static type check here: `1` fails when evaluated, see
    //! `a_result_that_is_not_a_bool_is_an_error`), `bind` (`cel.bind`), `version_v` (relaxed
    //! semver parsing), the `includes` and list-typed cases, `expensive` (the cost limit),
    //! and the derived-attribute cases.
    use super::super::test_devices::{device, slice_of};
    use super::*;

    enum Want {
        Match(bool),
        CompileError(&'static str),
        MatchError(&'static str),
    }

    /// (name, expression, driver, attributes, capacities, want)
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        Vec<(&'static str, AttributeValue)>,
        Vec<(&'static str, &'static str)>,
        Want,
    );

    #[test]
    fn kubes_cel_cases() {
        use AttributeValue as A;
        const D: &str = "dra.example.com";
        let s = |v: &str| A::String(v.into());
        let cases: Vec<Case> = vec![
            ("true", "true", "", vec![], vec![], Want::Match(true)),
            ("false", "false", "", vec![], vec![], Want::Match(false)),
            (
                "syntax-error",
                "?!",
                "",
                vec![],
                vec![],
                Want::CompileError("compilation failed"),
            ),
            (
                "runtime-error-lookup-identifier",
                r#"device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))"#,
                "",
                vec![],
                vec![],
                Want::MatchError("no such key: noSuchAttr"),
            ),
            (
                "runtime-error-lookup-map",
                r#"device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))"#,
                "",
                vec![],
                vec![],
                Want::MatchError("no such key: noSuchAttr"),
            ),
            (
                "domain-check-negative",
                r#""no-such-domain" in device.attributes"#,
                "",
                vec![],
                vec![],
                Want::Match(false),
            ),
            (
                "domain-check-positive",
                r#""dra.example.com" in device.attributes"#,
                "",
                vec![("dra.example.com/something", A::Bool(true))],
                vec![],
                Want::Match(true),
            ),
            (
                "empty-driver-name",
                r#"device.driver == """#,
                "",
                vec![],
                vec![],
                Want::Match(true),
            ),
            (
                "real-driver-name",
                r#"device.driver == "dra.example.com""#,
                D,
                vec![],
                vec![],
                Want::Match(true),
            ),
            (
                "driver-name-qualifier",
                r#"device.attributes["dra.example.com"].name"#,
                D,
                vec![("name", A::Bool(true))],
                vec![],
                Want::Match(true),
            ),
            (
                "driver-name-qualifier-map-lookup",
                r#"device.attributes["dra.example.com"]["name"]"#,
                D,
                vec![("name", A::Bool(true))],
                vec![],
                Want::Match(true),
            ),
            (
                "qualified-attribute-name",
                r#"device.attributes["other.example.com"].name"#,
                D,
                vec![("other.example.com/name", A::Bool(true))],
                vec![],
                Want::Match(true),
            ),
            (
                "int",
                r#"device.attributes["dra.example.com"].name > 0"#,
                D,
                vec![("name", A::Int(1))],
                vec![],
                Want::Match(true),
            ),
            (
                "string",
                r#"device.attributes["dra.example.com"].name == "fish""#,
                D,
                vec![("name", s("fish"))],
                vec![],
                Want::Match(true),
            ),
            (
                "version",
                r#"device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))"#,
                D,
                vec![("name", A::Version("1.0.0".into()))],
                vec![],
                Want::Match(true),
            ),
            (
                "quantity",
                r#"device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))"#,
                D,
                vec![],
                vec![("name", "1Mi")],
                Want::Match(true),
            ),
            (
                "check-positive",
                r#""name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))"#,
                D,
                vec![],
                vec![("name", "1Mi")],
                Want::Match(true),
            ),
            (
                "check-negative",
                r#"!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))"#,
                "",
                vec![],
                vec![],
                Want::Match(true),
            ),
            (
                "check_attribute_domains",
                r#"device.attributes.exists_one(x, x == "dra.example.com")"#,
                D,
                vec![("services", s("some_example_value"))],
                vec![],
                Want::Match(true),
            ),
            (
                "check_attribute_ids",
                r#"device.attributes["dra.example.com"].exists_one(x, x == "services")"#,
                D,
                vec![("services", s("some_example_value"))],
                vec![],
                Want::Match(true),
            ),
            (
                "split_attribute",
                r#"device.attributes["dra.example.com"].services.split("example").size() >= 2"#,
                D,
                vec![("services", s("some_example_value"))],
                vec![],
                Want::Match(true),
            ),
            (
                "regexp_attribute",
                r#"device.attributes["dra.example.com"].services.matches("[^a]?sym")"#,
                D,
                vec![("services", s("asymetric"))],
                vec![],
                Want::Match(true),
            ),
            (
                "check_capacity_domains",
                r#"device.capacity.exists_one(x, x == "dra.example.com")"#,
                D,
                vec![],
                vec![("memory", "1Mi")],
                Want::Match(true),
            ),
            (
                "check_capacity_ids",
                r#"device.capacity["dra.example.com"].exists_one(x, x == "memory")"#,
                D,
                vec![],
                vec![("memory", "1Mi")],
                Want::Match(true),
            ),
            (
                "allow_multiple_allocations_default",
                "device.allowMultipleAllocations == false",
                D,
                vec![],
                vec![],
                Want::Match(true),
            ),
        ];
        let sel = CelSelectors::new();
        let mut columnar = 0;
        for (name, expr, driver, attrs, caps, want) in cases {
            let d = device(driver, &attrs, &caps);
            let got = sel.interpret(expr, Sym::new(driver), &d);
            // The same through a slice: over columns where the expression has a column form.
            let slice = slice_of(driver, vec![d.clone()]);
            assert_eq!(sel.matches(expr, &slice, 0), got, "{name} (columns)");
            columnar += sel.selector(expr).columns.is_some() as usize;
            match (want, got) {
                (Want::Match(w), Ok(g)) => assert_eq!(g, w, "{name}"),
                (Want::CompileError(e), Err(g)) | (Want::MatchError(e), Err(g)) => {
                    assert!(g.contains(e), "{name}: {g:?} lacks {e:?}")
                }
                (_, got) => panic!("{name}: unexpected {got:?}"),
            }
        }
        // true, false, the two domain checks, the two driver names, the three attribute
        // lookups, int, string, quantity, check-positive, check-negative, allowMultiple.
        assert_eq!(columnar, 15, "the cases with a column form");
    }

    #[test]
    fn a_result_that_is_not_a_bool_is_an_error() {
        let sel = CelSelectors::new();
        let e = sel
            .interpret("1", Sym::new("d"), &device("d", &[], &[]))
            .unwrap_err();
        assert!(e.contains("must evaluate to a bool"), "{e}");
    }

    #[test]
    fn a_devices_value_is_built_once_for_every_expression_and_not_cloned() {
        let sel = CelSelectors::new();
        let d = device("d", &[("model", AttributeValue::String("a".into()))], &[]);
        assert!(!d.cel_value.is_set());
        let model = "device.attributes[\"d\"].model == \"a\"";
        assert_eq!(sel.interpret(model, Sym::new("d"), &d), Ok(true));
        assert!(d.cel_value.is_set());
        let first = d.cel_value.get_or_init(|| -> Result<DeviceVal, String> {
            unreachable!("built by the first evaluation")
        });
        assert!(first.is_some());
        assert_eq!(
            sel.interpret("device.driver == \"d\"", Sym::new("d"), &d),
            Ok(true)
        );
        // A clone may be changed: it builds its own.
        let mut changed = d.clone();
        assert!(!changed.cel_value.is_set());
        changed
            .attributes
            .insert("d/model".into(), AttributeValue::String("b".into()));
        assert_eq!(sel.interpret(model, Sym::new("d"), &changed), Ok(false));
    }

    #[test]
    fn a_device_whose_value_cannot_be_built_fails_each_expression() {
        let sel = CelSelectors::new();
        let d = device(
            "d",
            &[("v", AttributeValue::Version("not-semver".into()))],
            &[],
        );
        let first = sel.interpret("true", Sym::new("d"), &d).unwrap_err();
        let second = sel.interpret("false", Sym::new("d"), &d).unwrap_err();
        assert_eq!(first, second);
    }

    #[test]
    fn an_expression_is_compiled_once() {
        let sel = CelSelectors::new();
        let a = sel.compile("device.driver == \"x\"").unwrap();
        let b = sel.compile("device.driver == \"x\"").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(sel.programs.lock().len(), 1);
        assert!(sel.compile("?!").is_err());
        assert_eq!(sel.programs.lock().len(), 2, "compile errors are kept too");
    }
}
