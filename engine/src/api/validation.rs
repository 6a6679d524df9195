// TEMPORARY stand-in until helper-1 lands the real module.
use k8s_openapi::api::core::v1::Pod;
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub detail: String,
}
impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.detail)
    }
}
pub fn validate_pod_create(_pod: &Pod) -> Vec<FieldError> {
    vec![]
}
pub fn validate_pod_update(_new: &Pod, _old: &Pod) -> Vec<FieldError> {
    vec![]
}
