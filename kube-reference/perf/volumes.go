package perf

// The volume state each attempt used, for the replay: the PersistentVolumes,
// PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers, VolumeAttachments and
// CSIStorageCapacities that the scheduler's informers list, new or changed since the last
// attempt, and those that left. The four volume plugins read these listers (VolumeBinding
// through its assume caches, which scheduler_perf's pre-bound claims never fill).

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// VolumeState is a "volumes" line: what changed in the volume objects the attempt after it
// read.
type VolumeState struct {
	PersistentVolumes      []v1.PersistentVolume          `json:"persistentVolumes,omitempty"`
	PersistentVolumeClaims []v1.PersistentVolumeClaim     `json:"persistentVolumeClaims,omitempty"`
	StorageClasses         []storagev1.StorageClass       `json:"storageClasses,omitempty"`
	CSINodes               []storagev1.CSINode            `json:"csiNodes,omitempty"`
	CSIDrivers             []storagev1.CSIDriver          `json:"csiDrivers,omitempty"`
	VolumeAttachments      []storagev1.VolumeAttachment   `json:"volumeAttachments,omitempty"`
	CSIStorageCapacities   []storagev1.CSIStorageCapacity `json:"csiStorageCapacities,omitempty"`
	// Deleted: "kind/namespace/name" of the objects that left.
	Deleted []string `json:"deleted,omitempty"`
}

// volumeChanges writes a "volumes" line when the volume objects changed.
func (r *recorder) volumeChanges(fw framework.Framework) {
	f := fw.SharedInformerFactory()
	if f == nil {
		return
	}
	if r.volumes == nil {
		r.volumes = map[string]string{}
	}
	var st VolumeState
	seen := map[string]bool{}
	changed := func(key, rv string) bool {
		seen[key] = true
		if r.volumes[key] == rv {
			return false
		}
		r.volumes[key] = rv
		return true
	}
	all := labels.Everything()
	if l, err := f.Core().V1().PersistentVolumes().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("PersistentVolume//"+o.Name, o.ResourceVersion) {
				st.PersistentVolumes = append(st.PersistentVolumes, *o)
			}
		}
	}
	if l, err := f.Core().V1().PersistentVolumeClaims().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("PersistentVolumeClaim/"+o.Namespace+"/"+o.Name, o.ResourceVersion) {
				st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, *o)
			}
		}
	}
	if l, err := f.Storage().V1().StorageClasses().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("StorageClass//"+o.Name, o.ResourceVersion) {
				st.StorageClasses = append(st.StorageClasses, *o)
			}
		}
	}
	if l, err := f.Storage().V1().CSINodes().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("CSINode//"+o.Name, o.ResourceVersion) {
				st.CSINodes = append(st.CSINodes, *o)
			}
		}
	}
	if l, err := f.Storage().V1().CSIDrivers().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("CSIDriver//"+o.Name, o.ResourceVersion) {
				st.CSIDrivers = append(st.CSIDrivers, *o)
			}
		}
	}
	if l, err := f.Storage().V1().VolumeAttachments().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("VolumeAttachment//"+o.Name, o.ResourceVersion) {
				st.VolumeAttachments = append(st.VolumeAttachments, *o)
			}
		}
	}
	if l, err := f.Storage().V1().CSIStorageCapacities().Lister().List(all); err == nil {
		for _, o := range l {
			if changed("CSIStorageCapacity/"+o.Namespace+"/"+o.Name, o.ResourceVersion) {
				st.CSIStorageCapacities = append(st.CSIStorageCapacities, *o)
			}
		}
	}
	for key := range r.volumes {
		if !seen[key] {
			st.Deleted = append(st.Deleted, key)
			delete(r.volumes, key)
		}
	}
	sort.Strings(st.Deleted)
	n := len(st.PersistentVolumes) + len(st.PersistentVolumeClaims) + len(st.StorageClasses) +
		len(st.CSINodes) + len(st.CSIDrivers) + len(st.VolumeAttachments) +
		len(st.CSIStorageCapacities) + len(st.Deleted)
	if n > 0 {
		r.write(Decision{Kind: "volumes", Volumes: &st})
	}
}
