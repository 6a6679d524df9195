//! Integer resource vectors (kube's `framework.Resource`): CPU in millicores, memory and
//! ephemeral storage in bytes, a pod count, and extended (scalar) resources by interned name.

use super::intern::Sym;

/// kube's `DefaultMilliCPURequest`: the CPU a container without a CPU request is assumed to use
/// when scoring (`schedutil.GetNonzeroRequests`).
pub(crate) const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// kube's `DefaultMemoryRequest`: 200 MiB.
pub(crate) const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// A resource vector. Scalar resources are kept sorted by name; the vector does not allocate when
/// there are none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    /// Only meaningful for allocatable: the `pods` capacity of a node.
    pub allowed_pod_number: i64,
    pub scalar: Vec<(Sym, i64)>,
}

impl Resource {
    /// The amount of scalar resource `name`, 0 when absent.
    pub fn scalar(&self, name: Sym) -> i64 {
        self.scalar
            .binary_search_by_key(&name, |&(n, _)| n)
            .map_or(0, |i| self.scalar[i].1)
    }

    /// Sets scalar resource `name` to `v`.
    pub fn set_scalar(&mut self, name: Sym, v: i64) {
        match self.scalar.binary_search_by_key(&name, |&(n, _)| n) {
            Ok(i) => self.scalar[i].1 = v,
            Err(i) => self.scalar.insert(i, (name, v)),
        }
    }

    /// `self += other`.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pod_number += other.allowed_pod_number;
        for &(n, v) in &other.scalar {
            let cur = self.scalar(n);
            self.set_scalar(n, cur + v);
        }
    }

    /// `self -= other`.
    pub fn sub(&mut self, other: &Resource) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        self.allowed_pod_number -= other.allowed_pod_number;
        for &(n, v) in &other.scalar {
            let cur = self.scalar(n);
            self.set_scalar(n, cur - v);
        }
    }

    /// Element-wise maximum (used for init containers).
    pub fn set_max(&mut self, other: &Resource) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        for &(n, v) in &other.scalar {
            let cur = self.scalar(n);
            self.set_scalar(n, cur.max(v));
        }
    }

    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.scalar.iter().all(|&(_, v)| v == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_sub_max_with_scalars() {
        let gpu = Sym::new("example.com/gpu");
        let mut a = Resource {
            milli_cpu: 100,
            memory: 10,
            ..Default::default()
        };
        let mut b = Resource {
            milli_cpu: 50,
            memory: 30,
            ..Default::default()
        };
        b.set_scalar(gpu, 2);
        a.add(&b);
        assert_eq!((a.milli_cpu, a.memory, a.scalar(gpu)), (150, 40, 2));
        a.sub(&b);
        assert_eq!((a.milli_cpu, a.memory, a.scalar(gpu)), (100, 10, 0));
        a.set_max(&b);
        assert_eq!((a.milli_cpu, a.memory, a.scalar(gpu)), (100, 30, 2));
    }
}
