package perf

// The Dynamic Resource Allocation state each attempt used, for the replay: the DeviceClasses,
// ResourceSlices (with DeviceTaintRules applied) and ResourceClaims of the scheduler's DRA
// manager that are new or changed since the last attempt, those that left, and the claims
// whose allocation is in flight (Reserve made it, PreBind has not written it yet). Devices in
// flight for a claim the tracker does not list (the scheduler's in-memory claim for a pod's
// extended resources, DRAExtendedResource) are recorded as one pending entry named
// UnlistedClaim.

import (
	"encoding/json"
	"sort"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// DRAState is a "dra" line: what changed in the DRA objects the attempt after it read.
type DRAState struct {
	DeviceClasses  []resourceapi.DeviceClass   `json:"deviceClasses,omitempty"`
	ResourceSlices []resourceapi.ResourceSlice `json:"resourceSlices,omitempty"`
	ResourceClaims []resourceapi.ResourceClaim `json:"resourceClaims,omitempty"`
	// Deleted: "kind/namespace/name" of the objects that left.
	Deleted []string `json:"deleted,omitempty"`
	// Pending: every claim ("namespace/name") with an allocation in flight, with it; written
	// whole whenever the set changes.
	Pending []PendingAllocation `json:"pending,omitempty"`
	// PendingSet: the line carries the pending set (which may be empty).
	PendingSet bool `json:"pendingSet,omitempty"`
}

// UnlistedClaim names the pending entry of the devices held in flight by claims the tracker
// does not list (their request name is "unlisted").
const UnlistedClaim = "<unlisted>"

// PendingAllocation is a claim's in-flight allocation.
type PendingAllocation struct {
	Claim      string                        `json:"claim"`
	Allocation *resourceapi.AllocationResult `json:"allocation"`
}

// draVersions: the resourceVersion last written of each DRA object, by "kind/ns/name", and
// the pending set last written.
type draVersions struct {
	objects map[string]string
	pending string
	// unlisted: the last UnlistedClaim entry written (nil: none).
	unlisted *PendingAllocation
}

// draChanges writes a "dra" line when the DRA objects or the in-flight allocations changed.
func (r *recorder) draChanges(fw framework.Framework) {
	m := fw.SharedDRAManager()
	if m == nil {
		return
	}
	if r.dra.objects == nil {
		r.dra.objects = map[string]string{}
	}
	var st DRAState
	seen := map[string]bool{}
	changed := func(key, rv string) bool {
		seen[key] = true
		if r.dra.objects[key] == rv {
			return false
		}
		r.dra.objects[key] = rv
		return true
	}
	if classes, err := m.DeviceClasses().List(); err == nil {
		for _, c := range classes {
			if changed("DeviceClass//"+c.Name, c.ResourceVersion) {
				st.DeviceClasses = append(st.DeviceClasses, *c)
			}
		}
	}
	if slices, err := m.ResourceSlices().ListWithDeviceTaintRules(); err == nil {
		for _, s := range slices {
			// A slice patched by a taint rule keeps its resourceVersion: key the taints in.
			rv := s.ResourceVersion
			for _, d := range s.Spec.Devices {
				if len(d.Taints) > 0 {
					t, _ := json.Marshal(d.Taints)
					rv += "/" + string(t)
				}
			}
			if changed("ResourceSlice//"+s.Name, rv) {
				st.ResourceSlices = append(st.ResourceSlices, *s)
			}
		}
	}
	var pending []PendingAllocation
	// The devices the listed claims hold, allocated or in flight.
	listed := map[string]bool{}
	hold := func(a *resourceapi.AllocationResult) {
		for _, d := range a.Devices.Results {
			if d.AdminAccess == nil || !*d.AdminAccess {
				listed[d.Driver+"/"+d.Pool+"/"+d.Device] = true
			}
		}
	}
	if claims, err := m.ResourceClaims().List(); err == nil {
		for _, c := range claims {
			key := c.Namespace + "/" + c.Name
			if changed("ResourceClaim/"+key, c.ResourceVersion) {
				st.ResourceClaims = append(st.ResourceClaims, *c)
			}
			if c.Status.Allocation != nil {
				hold(c.Status.Allocation)
			}
			if a := m.ResourceClaims().GetPendingAllocation(c.UID); a != nil {
				pending = append(pending, PendingAllocation{Claim: key, Allocation: a})
				hold(a)
			}
		}
	}
	// The tracker refuses a read that an informer event interleaved with: try again, and
	// keep the last entry when it keeps refusing.
	var all sets.Set[structured.DeviceID]
	var err error
	for try := 0; try < 100; try++ {
		if all, err = m.ResourceClaims().ListAllAllocatedDevices(); err == nil {
			break
		}
	}
	if err != nil {
		if r.dra.unlisted != nil {
			pending = append(pending, *r.dra.unlisted)
		}
	} else {
		r.dra.unlisted = nil
		unlisted := &resourceapi.AllocationResult{}
		for id := range all {
			if !listed[id.String()] {
				unlisted.Devices.Results = append(unlisted.Devices.Results, resourceapi.DeviceRequestAllocationResult{
					Request: "unlisted", Driver: id.Driver.String(), Pool: id.Pool.String(), Device: id.Device.String(),
				})
			}
		}
		if res := unlisted.Devices.Results; len(res) > 0 {
			sort.Slice(res, func(i, j int) bool {
				return res[i].Driver+"/"+res[i].Pool+"/"+res[i].Device < res[j].Driver+"/"+res[j].Pool+"/"+res[j].Device
			})
			r.dra.unlisted = &PendingAllocation{Claim: UnlistedClaim, Allocation: unlisted}
			pending = append(pending, *r.dra.unlisted)
		}
	}
	for key := range r.dra.objects {
		if !seen[key] {
			st.Deleted = append(st.Deleted, key)
			delete(r.dra.objects, key)
		}
	}
	sort.Strings(st.Deleted)
	sort.Slice(pending, func(i, j int) bool { return pending[i].Claim < pending[j].Claim })
	sig := ""
	for _, p := range pending {
		sig += p.Claim + ";"
		if p.Claim == UnlistedClaim {
			for _, d := range p.Allocation.Devices.Results {
				sig += d.Driver + "/" + d.Pool + "/" + d.Device + ","
			}
		}
	}
	if sig != r.dra.pending {
		r.dra.pending = sig
		st.Pending, st.PendingSet = pending, true
	}
	if len(st.DeviceClasses)+len(st.ResourceSlices)+len(st.ResourceClaims)+len(st.Deleted) > 0 || st.PendingSet {
		r.write(Decision{Kind: "dra", DRA: &st})
	}
}
