//! Execution: walks the tree over the data (Go's text/template exec.go).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::error::{TemplateError, line_col};
use super::funcs::{Func, apply};
use super::limits::{MAX_OUTPUT, MAX_RANGE_ITERATIONS};
use super::parser::{Arg, ArgKind, Cmd, Control, Node, Pipe};
use super::values::{V, sorted, write_v};

/// Renders `nodes` (parsed from `src`) with `data` as dot and `$`.
pub(super) fn render(
    src: &str,
    nodes: &[Node],
    data: &Map<String, Value>,
) -> Result<String, TemplateError> {
    let mut st = Exec {
        src,
        out: String::with_capacity(src.len() + 64),
        vars: vec![("$", V::Map(data))],
        iterations: 0,
    };
    let dot = V::Map(data);
    st.walk(&dot, nodes)?;
    Ok(st.out)
}

#[derive(PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

struct Exec<'a> {
    src: &'a str,
    out: String,
    vars: Vec<(&'a str, V<'a>)>,
    iterations: u64,
}

fn snippet(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 40 {
        let short: String = s.chars().take(40).collect();
        format!("{short}...")
    } else {
        s.to_string()
    }
}

impl<'a> Exec<'a> {
    fn error(&self, span: (usize, usize), msg: impl std::fmt::Display) -> TemplateError {
        let (line, column) = line_col(self.src, span.0);
        let end = span.1.clamp(span.0, self.src.len());
        let text = self.src.get(span.0..end).unwrap_or("");
        TemplateError::Exec {
            line,
            column,
            message: format!("executing at <{}>: {msg}", snippet(text)),
        }
    }

    fn check_output(&self, pos: usize) -> Result<(), TemplateError> {
        if self.out.len() > MAX_OUTPUT {
            let (line, column) = line_col(self.src, pos);
            return Err(TemplateError::Exec {
                line,
                column,
                message: format!("output exceeds the limit of {} MiB", MAX_OUTPUT >> 20),
            });
        }
        Ok(())
    }

    fn walk(&mut self, dot: &V<'a>, nodes: &'a [Node]) -> Result<Flow, TemplateError> {
        for node in nodes {
            let flow = match node {
                Node::Text(pos, t) => {
                    self.out.push_str(t);
                    self.check_output(*pos)?;
                    Flow::Normal
                }
                Node::Action(pipe) => {
                    let v = self.eval_pipe(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        match &v {
                            V::Missing | V::Nil => self.out.push_str("<no value>"),
                            V::Str(s) => self.out.push_str(s),
                            V::Int(i) => {
                                let _ = write!(self.out, "{i}");
                            }
                            other => write_v(&mut self.out, other, 0),
                        }
                        self.check_output(pipe.span.0)?;
                    }
                    Flow::Normal
                }
                Node::If(c) | Node::With(c) => {
                    let mark = self.vars.len();
                    let v = self.eval_pipe(dot, &c.pipe)?;
                    let flow = if v.truth() {
                        if matches!(node, Node::With(_)) {
                            self.walk(&v, &c.list)?
                        } else {
                            self.walk(dot, &c.list)?
                        }
                    } else {
                        self.walk(dot, &c.else_list)?
                    };
                    self.vars.truncate(mark);
                    flow
                }
                Node::Range(c) => {
                    let mark = self.vars.len();
                    self.range(dot, c)?;
                    self.vars.truncate(mark);
                    Flow::Normal
                }
                Node::Break => Flow::Break,
                Node::Continue => Flow::Continue,
            };
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn range(&mut self, dot: &V<'a>, c: &'a Control) -> Result<(), TemplateError> {
        let val = self.eval_pipe(dot, &c.pipe)?;
        let mark = self.vars.len();
        let mut ran = false;
        let mut one = |st: &mut Self, index: V<'a>, elem: V<'a>| -> Result<Flow, TemplateError> {
            ran = true;
            st.iterations += 1;
            if st.iterations > MAX_RANGE_ITERATIONS {
                return Err(st.error(
                    c.pipe.span,
                    format!("range exceeded {MAX_RANGE_ITERATIONS} iterations"),
                ));
            }
            let decl = &c.pipe.decl;
            if c.pipe.is_assign {
                if decl.len() > 1 {
                    st.set_var(&decl[0], index);
                    st.set_var(&decl[1], elem.clone());
                } else if let Some(d) = decl.first() {
                    st.set_var(d, elem.clone());
                }
            } else {
                let n = st.vars.len();
                if !decl.is_empty() && n >= 1 {
                    st.vars[n - 1].1 = elem.clone();
                }
                if decl.len() > 1 && n >= 2 {
                    st.vars[n - 2].1 = index;
                }
            }
            let flow = st.walk(&elem, &c.list)?;
            st.vars.truncate(mark);
            Ok(flow)
        };
        match &val {
            V::Arr(a) => {
                for (i, e) in a.iter().enumerate() {
                    if one(self, V::Int(i as i64), V::from_json(e))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Map(m) => {
                for (k, e) in sorted(m) {
                    if one(self, V::Str(Cow::Borrowed(k)), V::from_json(e))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Int(n) => {
                if c.pipe.decl.len() > 1 {
                    return Err(self.error(
                        c.pipe.span,
                        format!("can't use {n} to iterate over more than one variable"),
                    ));
                }
                for i in 0..*n {
                    if one(self, V::Int(i), V::Int(i))? == Flow::Break {
                        break;
                    }
                }
            }
            V::Missing | V::Nil => {}
            other => {
                return Err(self.error(
                    c.pipe.span,
                    format!("range can't iterate over {}", other.go_string()),
                ));
            }
        }
        if !ran {
            self.walk(dot, &c.else_list)?;
        }
        Ok(())
    }

    fn set_var(&mut self, name: &str, v: V<'a>) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            slot.1 = v;
        }
    }

    fn var(&self, name: &str, span: (usize, usize)) -> Result<V<'a>, TemplateError> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error(span, format!("undefined variable: {name}")))
    }

    fn eval_pipe(&mut self, dot: &V<'a>, pipe: &'a Pipe) -> Result<V<'a>, TemplateError> {
        let mut value: Option<V<'a>> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_cmd(dot, cmd, value.take())?;
            // Go digs a nil interface down to the invalid value between commands.
            value = Some(if matches!(v, V::Nil) { V::Missing } else { v });
        }
        let v = value.unwrap_or(V::Missing);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, v.clone());
            } else {
                self.vars.push((name.as_str(), v.clone()));
            }
        }
        Ok(v)
    }

    fn not_a_function(&self, cmd: &Cmd, has_final: bool, first: &Arg) -> Result<(), TemplateError> {
        if cmd.args.len() > 1 || has_final {
            return Err(self.error(
                cmd.span,
                format!(
                    "can't give argument to non-function {}",
                    &self.src[first.span.0..first.span.1]
                ),
            ));
        }
        Ok(())
    }

    fn eval_cmd(
        &mut self,
        dot: &V<'a>,
        cmd: &'a Cmd,
        fin: Option<V<'a>>,
    ) -> Result<V<'a>, TemplateError> {
        let first = &cmd.args[0];
        let rest = &cmd.args[1..];
        let has_args = !rest.is_empty() || fin.is_some();
        match &first.kind {
            ArgKind::Field(path) => self.field_chain(dot.clone(), path, has_args, first.span),
            ArgKind::Var(name, path) => {
                let v = self.var(name, first.span)?;
                if path.is_empty() {
                    self.not_a_function(cmd, fin.is_some(), first)?;
                    Ok(v)
                } else {
                    self.field_chain(v, path, has_args, first.span)
                }
            }
            ArgKind::Chain(inner, path) => {
                let v = self.eval_arg(dot, inner)?;
                self.field_chain(v, path, has_args, first.span)
            }
            ArgKind::Func(f) => self.call(dot, *f, cmd, rest, fin),
            ArgKind::Pipe(p) => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                self.eval_pipe(dot, p)
            }
            ArgKind::Const(c) => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                Ok(V::from_const(c))
            }
            ArgKind::Dot => {
                self.not_a_function(cmd, fin.is_some(), first)?;
                Ok(dot.clone())
            }
            ArgKind::Nil => Err(self.error(cmd.span, "nil is not a command")),
        }
    }

    fn eval_arg(&mut self, dot: &V<'a>, arg: &'a Arg) -> Result<V<'a>, TemplateError> {
        match &arg.kind {
            ArgKind::Dot => Ok(dot.clone()),
            ArgKind::Nil => Ok(V::Nil),
            ArgKind::Const(c) => Ok(V::from_const(c)),
            ArgKind::Field(path) => self.field_chain(dot.clone(), path, false, arg.span),
            ArgKind::Var(name, path) => {
                let v = self.var(name, arg.span)?;
                self.field_chain(v, path, false, arg.span)
            }
            ArgKind::Chain(inner, path) => {
                let v = self.eval_arg(dot, inner)?;
                self.field_chain(v, path, false, arg.span)
            }
            ArgKind::Func(f) => {
                let cmd_like = Cmd {
                    span: arg.span,
                    args: Vec::new(),
                };
                self.call(dot, *f, &cmd_like, &[], None)
            }
            ArgKind::Pipe(p) => self.eval_pipe(dot, p),
        }
    }

    fn field_chain(
        &self,
        mut cur: V<'a>,
        path: &[String],
        has_args: bool,
        span: (usize, usize),
    ) -> Result<V<'a>, TemplateError> {
        for (i, name) in path.iter().enumerate() {
            cur = match cur {
                V::Missing => return Ok(V::Missing),
                V::Map(m) => {
                    if has_args && i + 1 == path.len() {
                        return Err(
                            self.error(span, format!("{name} is not a method but has arguments"))
                        );
                    }
                    m.get(name.as_str()).map_or(V::Missing, V::from_json)
                }
                V::Nil => {
                    return Err(self.error(
                        span,
                        format!("nil pointer evaluating interface {{}}.{name}"),
                    ));
                }
                other => {
                    return Err(self.error(
                        span,
                        format!("can't evaluate field {name} in type {}", other.type_name()),
                    ));
                }
            };
        }
        Ok(cur)
    }

    fn call(
        &mut self,
        dot: &V<'a>,
        f: Func,
        cmd: &Cmd,
        args: &'a [Arg],
        fin: Option<V<'a>>,
    ) -> Result<V<'a>, TemplateError> {
        let n = args.len() + usize::from(fin.is_some());
        let (min, max) = f.arity();
        if n < min || max.is_some_and(|m| n > m) {
            let want = match max {
                Some(m) if m == min => format!("want {m}"),
                _ => format!("want at least {min}"),
            };
            return Err(self.error(
                cmd.span,
                format!("wrong number of args for {}: {want} got {n}", f.name()),
            ));
        }
        let nil = |v: V<'a>| if matches!(v, V::Missing) { V::Nil } else { v };
        if matches!(f, Func::And | Func::Or) {
            let want = f == Func::Or;
            let mut v = V::Nil;
            for a in args {
                v = nil(self.eval_arg(dot, a)?);
                if v.truth() == want {
                    return Ok(v);
                }
            }
            if let Some(fv) = fin {
                v = nil(fv);
            }
            return Ok(v);
        }
        let mut vals = Vec::with_capacity(n);
        for a in args {
            vals.push(nil(self.eval_arg(dot, a)?));
        }
        if let Some(fv) = fin {
            vals.push(nil(fv));
        }
        apply(f, &vals)
            .map_err(|e| self.error(cmd.span, format!("error calling {}: {e}", f.name())))
    }
}
