"""Where the kernel zeroes fresh pages, by thread and by the first tidegate frame above the
allocation (from a `perf record --call-graph dwarf` profile):

    perf record --call-graph dwarf,16384 -F 2000 -o perf.data target/release/tidegate run ...
    perf script -i perf.data -F comm,ip,sym > perf.txt
    python3 perf-data/scripts/page-zeroing-sites.py perf.txt [TOP]

First line: per thread, (samples in clear_page, all samples).
"""
import re,collections,sys
c=collections.Counter(); tot=collections.Counter(); allc=collections.Counter()
skip=re.compile(r'^(alloc::|core::|hashbrown|std::|mi_|_mi_|__rust|<alloc|<core|<std|\[unknown\]|<hashbrown|grow_one|finish_grow|push<|insert<|reserve|do_alloc|new_uninit|fallible|resize|with_capacity|clone|from_iter|to_vec|to_owned|new<|collect|extend|spec_)')
def flush(comm,frames):
    if not frames: return
    allc[comm]+=1
    if not any('clear_page' in f for f in frames[:3]): return
    tot[comm]+=1
    site='?'
    for f in frames:
        if not skip.match(f) and ('tidegate' in f):
            site=re.sub(r'tidegate_(engine|bench)::','',f)[:120]; break
    c[(comm,site)]+=1
comm=None; frames=[]
for line in open(sys.argv[1]):
    if not line.startswith((' ','\t')):
        if line.strip()=='' : continue
        flush(comm,frames); comm=line.split()[0]; frames=[]
    else:
        parts=line.strip().split(None,1)
        if len(parts)==2: frames.append(re.sub(r' \(inlined\)','',parts[1]))
flush(comm,frames)
print({k:(tot[k],allc[k]) for k in allc})
for (cm,s),v in c.most_common(int(sys.argv[2]) if len(sys.argv)>2 else 30): print(f"{v:6d} {cm[:16]:16s} {s}")
