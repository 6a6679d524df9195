// TEMPORARY stand-in until helper-2 lands the Go text/template renderer (it overwrites this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("template: unsupported action")]
    Unsupported,
}
impl TemplateError {
    pub fn line(&self) -> Option<usize> {
        None
    }
    pub fn column(&self) -> Option<usize> {
        None
    }
}
pub struct Template {
    text: String,
}
impl Template {
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        Ok(Template {
            text: text.to_string(),
        })
    }
    pub fn is_static(&self) -> bool {
        !self.text.contains("{{")
    }
    pub fn render(
        &self,
        data: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, TemplateError> {
        let idx = data.get("Index").map(|v| v.to_string()).unwrap_or_default();
        let out = self
            .text
            .replace("{{ .Index }}", &idx)
            .replace("{{.Index}}", &idx);
        if out.contains("{{") {
            return Err(TemplateError::Unsupported);
        }
        Ok(out)
    }
}
