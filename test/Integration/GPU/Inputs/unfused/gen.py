# Generates MLIR for each test case, compiles it with ssd-gpu-unfused-pipeline
# (format=bin), writes <case>.cubin and <case>.json (the ssd.launch dict + case).
import json, os, re, subprocess, sys
OPT = os.environ.get('SSD_OPT', '/work/main/build-gpu/bin/ssd-opt')
def T(shape, el): return 'tensor<' + 'x'.join(str(d) for d in shape) + 'x' + el + '>'
def case_mlir(c):
    h,p,n,g,Q = c['h'],c['p'],c['n'],c['g'],c['Q']
    el, st = c['dtype'], c.get('state','f32')
    B,L = '?','?'
    args = [('x',[B,L,h,p],el),('dt',[B,L,h],'f32'),('A',[h],'f32'),('B',[B,L,g,n],el),('C',[B,L,g,n],el)]
    f = c.get('features',[])
    if 'D' in f: args.append(('D',[h],'f32'))
    if 'Dhp' in f: args.append(('D',[h,p],'f32'))
    if 'z' in f: args.append(('z',[B,L,h,p],el))
    if 'dt_bias' in f: args.append(('dt_bias',[h],'f32'))
    varlen = 'varlen' in f
    if 'initial_states' in f: args.append(('initial_states',['?' ,h,p,n],st))
    if 'seq_idx' in f: args.append(('seq_idx',[B,L],'i32'))
    if varlen:
        args = [(nm,[1 if d=='?' and i==0 and nm not in('initial_states',) else d for i,d in enumerate(sh)],e) for nm,sh,e in args]
        args.append(('cu_seqlens',['?'],'i32'))
    xs = args[0][1]
    fs = ['?' if varlen else xs[0],h,p,n]
    sig = ', '.join('%%%s: %s' % (nm, T(sh,e)) for nm,sh,e in args)
    ops = ' '.join('%s(%%%s : %s)' % (nm,nm,T(sh,e)) for nm,sh,e in args)
    attrs = ['chunk_size = %d : i64' % Q]
    if 'softplus' in f: attrs.append('dt_softplus')
    if 'dt_limit' in f: attrs.append('dt_limit = array<f64: 0.01, 0.5>')
    if st != 'f32': attrs.append('state_type = ' + st)
    yt, ft = T(xs, el), T(fs, st)
    return ('func.func @ssd(%s) -> (%s, %s) {\n  %%y, %%fs = ssd.combined %s {%s} -> %s, %s\n  return %%y, %%fs : %s, %s\n}\n'
            % (sig, yt, ft, ops, ', '.join(attrs), yt, ft, yt, ft))
def attr_to_json(s):
    s = re.sub(r' : i64', '', s)
    s = re.sub(r'([A-Za-z_][A-Za-z_0-9]*) = ', r'"\1": ', s)
    return json.loads(s)
def unescape(t):
    out = bytearray(); i = 0
    while i < len(t):
        if t[i] == '\\':
            if t[i+1] in '\\"': out.append(ord(t[i+1])); i += 2
            else: out.append(int(t[i+1:i+3], 16)); i += 3
        else: out += t[i].encode('latin1'); i += 1
    return bytes(out)
cases = json.load(open(sys.argv[1]))
for name, c in cases.items():
    src = case_mlir(c)
    open(name + '.mlir', 'w').write(src)
    r = subprocess.run([OPT, name + '.mlir', '--ssd-gpu-unfused-pipeline=format=bin tensor-cores=%d' % c.get('tc',1)], capture_output=True, text=True)
    if r.returncode: print(name, r.stderr[:2000]); continue
    out = r.stdout
    m = re.search(r'ssd\.launch = (\{.*\})\} \{?\s*\n', out.split('\n')[0] + '\n', re.S) or re.search(r'ssd\.launch = (\{.*\})\}', out.split('\n')[0])
    launch = attr_to_json(m.group(1))
    b = re.search(r'bin = "(.*)">\]', out, re.S)
    open(name + '.cubin', 'wb').write(unescape(b.group(1)))
    json.dump({'case': c, 'launch': launch}, open(name + '.json', 'w'), indent=1)
    print(name, 'ok', len(b.group(1)))
