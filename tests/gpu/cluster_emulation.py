#!/usr/bin/env python3
# CPU check of the cuda-cluster ALGORITHM (not the CUDA code): a line-by-line
# transcription of kernels/cuda_backend.cu cluster_kernel, its phases run in
# lockstep over the blocks of a cluster, against the baseline stepping (update
# box + fill_ghosts axis by axis). Float64, same operation order: must match
# exactly. Not in ctest (about a minute of pure Python); run it after changing
# the kernel's regions, ghost rules or copies: python3 tests/gpu/cluster_emulation.py
# Faithful CPU transcription of cluster_kernel (phases in lockstep over the
# blocks of a cluster) against the baseline stepping (update box + fill_ghosts
# axis by axis). Float64, same operation order: results must match exactly.
import itertools, random, sys
W0 = {1: [-2.0, 1.0], 2: [-30.0/12.0, 16.0/12.0, -1.0/12.0]}
U, FLO, FHI, GLO, GHI, FAR = range(6)

class Face:
    def __init__(s, typ, value, h, n, side): s.typ, s.value, s.h, s.n, s.side = typ, value, h, n, side
    def source(s, i):
        if s.typ == 'p': return i + s.n if s.side == 0 else i - s.n
        return -i if s.side == 0 else 2*(s.n-1) - i
    def ghost(s, i, v):
        if s.typ == 'd' and i == (0 if s.side == 0 else s.n-1): return s.value
        sign = -1.0 if s.typ == 'd' else 1.0
        j = -i if s.side == 0 else i - (s.n-1)
        shift = 2*s.value if s.typ == 'd' else (2.0*j*s.h*s.value if s.typ == 'n' else 0.0)
        return sign*v + shift

def setup(n, faces, r):
    axes = []
    for a in range(2):
        f = [Face(faces[a][sd][0], faces[a][sd][1], 0.1, n[a], sd) for sd in range(2)]
        per = f[0].typ == 'p'
        d = [f[sd].typ == 'd' for sd in range(2)]
        axes.append(dict(n=n[a], per=per, lo=1 if d[0] else 0, hi=n[a]-(1 if d[1] else 0), dir=d, face=f))
    return axes

def along(w, c, m, p, R):
    ax = w[0]*c
    for j in range(1, R+1): ax += w[j]*(m[j]+p[j])
    return ax

# ---------------- reference (host/cuda baseline) ----------------
def fill(u, axes, r, H):
    n = [axes[0]['n'], axes[1]['n']]
    for a in range(2):
        for sd in range(2):
            f = axes[a]['face'][sd]
            fl = 1 if axes[a]['dir'][sd] else 0
            rng = range(-r, fl) if sd == 0 else range(n[a]-fl, n[a]+r)
            for i in rng:
                for o in range(-H, n[1-a]+H):
                    pt = (i, o) if a == 0 else (o, i)
                    src = f.source(i)
                    sp = (src, o) if a == 0 else (o, src)
                    u[pt] = f.ghost(i, u[sp])

def ref_step(u, prev, axes, r, w, up, kind, H):
    out = dict(prev) if kind != 'heat' else dict(prev)
    for y in range(axes[1]['lo'], axes[1]['hi']):
        for x in range(axes[0]['lo'], axes[0]['hi']):
            c = u[(x, y)]
            lapv = 0.0
            lapv += along(w[0], c, [0]+[u[(x-j, y)] for j in range(1, r+1)], [0]+[u[(x+j, y)] for j in range(1, r+1)], r)
            lapv += along(w[1], c, [0]+[u[(x, y-j)] for j in range(1, r+1)], [0]+[u[(x, y+j)] for j in range(1, r+1)], r)
            out[(x, y)] = upd(kind, c, prev[(x, y)], lapv, up)
    fill(out, axes, r, H)
    return out, u

def upd(kind, c, p, l, up):
    if kind == 'heat': return c + up['a']*l
    if kind == 'wave': return 2.0*c - p + up['c2']*l
    return c + up['dt']*p + up['h']*l

# ---------------- emulated cluster kernel ----------------
def classify(a, c, r):
    if a['per'] or (a['lo'] <= c < a['hi']): return U
    if c == 0 and a['dir'][0]: return FLO
    if c == a['n']-1 and a['dir'][1]: return FHI
    if -r <= c < 0: return GLO
    if a['n'] <= c < a['n']+r: return GHI
    return FAR

def loadc(a, c, r):
    if a['per']: return True, c % a['n']
    return (-r <= c < a['n']+r), c

def launch(cur, prev, axes, r, w, up, wave, start, steps, plan):
    Bn, TX, TY, K = plan
    KR = K*r
    nx, ny = axes[0]['n'], axes[1]['n']
    gx = -(-nx//TX); cr = Bn*TY; gy = -(-ny//cr)*Bn
    Wd = TX + 2*KR; rows = TY + (2*KR if Bn == 1 else KR + r)
    oc, op = {}, {}
    ax, ay = axes
    for bxi in range(gx):
        for cy in range(gy//Bn):
            blocks = []
            for rank in range(Bn):
                byi = cy*Bn + rank
                b = dict(rank=rank, x0=bxi*TX, y0=byi*TY)
                b['ybase'] = b['y0'] - (KR if rank == 0 else r); b['xbase'] = b['x0'] - KR
                A = [[0.0]*Wd for _ in range(rows)]; Bf = [[0.0]*Wd for _ in range(rows)]
                for ly in range(rows):
                    okr, gyy = loadc(ay, b['ybase']+ly, r)
                    for lx in range(Wd):
                        ok, gxx = loadc(ax, b['xbase']+lx, r)
                        ok = ok and okr
                        A[ly][lx] = cur[(gxx, gyy)] if ok else 0.0
                        Bf[ly][lx] = prev[(gxx, gyy)] if (wave and ok) else 0.0
                b['A'], b['B'] = A, Bf
                blocks.append(b)
            for s in range(1, steps+1):
                for b in blocks:
                    rank = b['rank']; olo = rank == 0; ohi = rank == Bn-1
                    y0, x0 = b['y0'], b['x0']
                    b['vy0'] = y0 - ((steps-s+1)*r if olo else r); b['vy1'] = y0 + TY + ((steps-s+1)*r if ohi else r)
                    b['vx0'] = x0 - (steps-s+1)*r; b['vx1'] = x0 + TX + (steps-s+1)*r
                    b['ry0'] = y0 - ((steps-s)*r if olo else 0); b['ry1'] = y0 + TY + ((steps-s)*r if ohi else 0)
                    b['rx0'] = b['vx0'] + r; b['rx1'] = b['vx1'] - r
                if s >= 2:
                    if Bn > 1:  # phase 0: reads peers' own rows, writes own copy rows
                        for b in blocks:
                            rank = b['rank']
                            for side in range(2):
                                if (rank == 0) if side == 0 else (rank == Bn-1): continue
                                pb = blocks[rank-1 if side == 0 else rank+1]
                                first = b['y0']-r if side == 0 else b['y0']+TY
                                for y in range(first, first+r):
                                    c = classify(ay, y, r)
                                    if c in (GLO, GHI, FAR): continue
                                    for x in range(b['vx0'], b['vx1']):
                                        b['A'][y-b['ybase']][x-b['xbase']] = pb['A'][y-pb['ybase']][x-pb['xbase']]
                    for b in blocks:  # phase 1
                        if ay['per'] or not (b['vy0'] < 0 or b['vy1'] > ny): continue
                        for j in range(2*r):
                            side = 0 if j < r else 1
                            y = -r+j if side == 0 else ny+(j-r)
                            for x in range(b['vx0'], b['vx1']):
                                if y < b['vy0'] or y >= b['vy1'] or classify(ax, x, r) != U: continue
                                src = ay['face'][side].source(y)
                                if src < b['vy0'] or src >= b['vy1']: continue
                                A = b['A']; A[y-b['ybase']][x-b['xbase']] = ay['face'][side].ghost(y, A[src-b['ybase']][x-b['xbase']])
                for b in blocks:  # phase 2
                    A, Bf = b['A'], b['B']
                    for y in range(b['ry0'], b['ry1']):
                        cyc = classify(ay, y, r)
                        if cyc >= GLO: continue
                        ly = y - b['ybase']
                        for x in range(b['rx0'], b['rx1']):
                            cx = classify(ax, x, r); lx = x - b['xbase']
                            if cx == U and cyc == U:
                                c = A[ly][lx]; lapv = 0.0
                                lapv += along(w[0], c, [0]+[A[ly][lx-j] for j in range(1, r+1)], [0]+[A[ly][lx+j] for j in range(1, r+1)], r)
                                lapv += along(w[1], c, [0]+[A[ly-j][lx] for j in range(1, r+1)], [0]+[A[ly+j][lx] for j in range(1, r+1)], r)
                                kind = 'heat' if not wave else ('start' if (start and s == 1) else 'wave')
                                Bf[ly][lx] = upd(kind, c, Bf[ly][lx], lapv, up)
                            elif cx == U and cyc in (FLO, FHI):
                                Bf[ly][lx] = ay['face'][0 if cyc == FLO else 1].value
                            elif cyc == U and cx in (FLO, FHI):
                                Bf[ly][lx] = ax['face'][0 if cx == FLO else 1].value
                    if not ax['per'] and (b['rx0'] < 0 or b['rx1'] > nx):  # phase 3
                        for y in range(b['ry0'], b['ry1']):
                            if classify(ay, y, r) != U: continue
                            for j in range(2*r):
                                side = 0 if j < r else 1
                                x = -r+j if side == 0 else nx+(j-r)
                                if x < b['rx0'] or x >= b['rx1']: continue
                                src = ax['face'][side].source(x)
                                if src < b['rx0'] or src >= b['rx1']: continue
                                ly = y - b['ybase']
                                Bf[ly][x-b['xbase']] = ax['face'][side].ghost(x, Bf[ly][src-b['xbase']])
                for b in blocks: b['A'], b['B'] = b['B'], b['A']
            for b in blocks:
                for y in range(b['y0'], min(b['y0']+TY, ny)):
                    if classify(ay, y, r) != U: continue
                    for x in range(b['x0'], min(b['x0']+TX, nx)):
                        if classify(ax, x, r) != U: continue
                        oc[(x, y)] = b['A'][y-b['ybase']][x-b['xbase']]
                        if wave: op[(x, y)] = b['B'][y-b['ybase']][x-b['xbase']]
    return oc, op

def run_case(n, faces, r, wave, plan, total, chunk, seed):
    rnd = random.Random(seed)
    axes = setup(n, faces, r)
    w = [[W0[r][j]/(0.1*0.1) for j in range(r+1)], [W0[r][j]/(0.07*0.07) for j in range(r+1)]]
    up = dict(a=1e-4, c2=1e-4, h=0.5e-4, dt=1e-2)
    H = r
    u = {}; v = {}
    for y in range(-H, n[1]+H):
        for x in range(-H, n[0]+H):
            u[(x, y)] = rnd.uniform(-1, 1) if 0 <= x < n[0] and 0 <= y < n[1] else float('nan')
            v[(x, y)] = rnd.uniform(-1, 1) if 0 <= x < n[0] and 0 <= y < n[1] else float('nan')
    fill(u, axes, r, H)
    ru, rp = dict(u), dict(v) if wave else dict(u)
    step = 0
    for t in range(total):
        kind = 'heat' if not wave else ('start' if step == 0 else 'wave')
        ru, rp = ref_step(ru, rp, axes, r, w, up, kind, H); step += 1
    cu, cp = dict(u), dict(v) if wave else dict(u)
    step = 0; left = total
    while left > 0:
        st = min(left, chunk)
        while st > 0:
            ks = min(st, plan[3])
            oc, op = launch(cu, cp, axes, r, w, up, wave, step == 0, ks, plan)
            nu = dict(cu); nu.update(oc); fill(nu, axes, r, H)
            if wave:
                npv = dict(cp); npv.update(op); fill(npv, axes, r, H); cp = npv
            cu = nu; step += ks; st -= ks; left -= ks
    bad = [(x, y) for y in range(n[1]) for x in range(n[0]) if ru[(x, y)] != cu[(x, y)]]
    badp = [(x, y) for y in range(n[1]) for x in range(n[0]) if wave and ru[(x, y)] != rp[(x, y)] and False]
    if wave:
        # baseline previous after the loop is rp (the old current with ghosts)
        badp = [(x, y) for y in range(n[1]) for x in range(n[0]) if rp[(x, y)] != cp[(x, y)]]
    return bad, badp

faces_sets = {
    'dir': [[('d', 0.0)]*2, [('d', 0.0)]*2],
    'neu': [[('n', 0.0)]*2, [('n', 0.0)]*2],
    'per': [[('p', 0.0)]*2, [('p', 0.0)]*2],
    'mix': [[('n', -0.5), ('d', 0.25)], [('d', 0.25), ('n', 1.0)]],
    'mixp': [[('p', 0.0)]*2, [('d', 1.0), ('n', 0.0)]],
    'mixp2': [[('p', 0.0)]*2, [('d', -0.75), ('n', 0.5)]][::-1],
}
fails = 0; count = 0
for plan in [(1, 8, 4, 2), (2, 8, 4, 2), (4, 6, 4, 2), (2, 4, 4, 1), (3, 8, 6, 3), (8, 8, 2, 1), (2, 8, 8, 4)]:
    for r in (1, 2):
        if plan[1] < plan[3]*r or plan[2] < plan[3]*r: continue
        for name, fs in faces_sets.items():
            for wave in (False, True):
                for n in ([13, 11], [7, 6], [17, 19]):
                    bad, badp = run_case(n, fs, r, wave, plan, total=5, chunk=5, seed=count)
                    count += 1
                    if bad or badp:
                        fails += 1
                        print('FAIL', plan, r, name, 'wave' if wave else 'heat', n, len(bad), bad[:4], len(badp), badp[:4])
print('cases', count, 'fails', fails)
