//! Control flow: basic blocks and their immediate post-dominators, where a divergent
//! branch's paths reconverge (the SIMT stack of GPGPU-Sim's functional simulator, after
//! Fung et al., "Dynamic Warp Formation", MICRO 2007).

use crate::instr::{Inst, Instr};

/// Per instruction (and one past the last): whether some `bra` jumps to it.
pub fn branch_targets(insts: &[Inst]) -> Vec<bool> {
    let mut target = vec![false; insts.len() + 1];
    for inst in insts {
        if let Instr::Bra { target: t } = inst.instr {
            if let Some(x) = target.get_mut(t as usize) {
                *x = true;
            }
        }
    }
    target
}

/// For each instruction, the instruction index where the paths of a conditional branch at
/// that index meet again; `u32::MAX` where they only meet at exit, and for instructions that
/// are not conditional branches.
pub fn reconvergence(insts: &[Inst]) -> Vec<u32> {
    let n = insts.len();
    let mut out = vec![u32::MAX; n];
    if n == 0 {
        return out;
    }
    // Leaders: the first instruction, branch targets, and instructions after terminators
    // and branches.
    let mut leader = branch_targets(insts);
    leader[0] = true;
    for (i, inst) in insts.iter().enumerate() {
        if matches!(inst.instr, Instr::Bra { .. } | Instr::Exit | Instr::Ret) {
            leader[i + 1] = true;
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    let mut block_of = vec![0usize; n];
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        for x in block_of.iter_mut().take(e).skip(s) {
            *x = b;
        }
    }
    let nb = starts.len();
    let exit = nb; // virtual exit node
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for b in 0..nb {
        let last = starts.get(b + 1).copied().unwrap_or(n) - 1;
        let inst = &insts[last];
        match &inst.instr {
            Instr::Bra { target } => {
                let t = *target as usize;
                succ[b].push(if t < n { block_of[t] } else { exit });
                if inst.guard.is_some() {
                    succ[b].push(if last + 1 < n {
                        block_of[last + 1]
                    } else {
                        exit
                    });
                }
            }
            Instr::Exit | Instr::Ret => {
                if inst.guard.is_some() && last + 1 < n {
                    succ[b].push(block_of[last + 1]);
                }
                succ[b].push(exit);
            }
            _ => succ[b].push(if last + 1 < n {
                block_of[last + 1]
            } else {
                exit
            }),
        }
    }
    let ipdom = post_dominators(&succ, exit);
    for b in 0..nb {
        let last = starts.get(b + 1).copied().unwrap_or(n) - 1;
        if matches!(insts[last].instr, Instr::Bra { .. }) && insts[last].guard.is_some() {
            out[last] = match ipdom[b] {
                Some(p) if p != exit => starts[p] as u32,
                _ => u32::MAX,
            };
        }
    }
    out
}

/// Immediate post-dominators of each node (`None` where the exit is unreachable), by the
/// iterative algorithm of Cooper, Harvey and Kennedy on the reversed graph.
fn post_dominators(succ: &[Vec<usize>], exit: usize) -> Vec<Option<usize>> {
    let nb = succ.len();
    let total = nb + 1;
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            pred[s].push(b);
        }
    }
    // Reverse post-order of the reversed graph, from exit (iterative DFS).
    let mut order = Vec::with_capacity(total);
    let mut seen = vec![false; total];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some((v, k)) = stack.pop() {
        if k < pred[v].len() {
            stack.push((v, k + 1));
            let w = pred[v][k];
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            order.push(v);
        }
    }
    order.reverse();
    let mut rpo = vec![usize::MAX; total];
    for (i, &v) in order.iter().enumerate() {
        rpo[v] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; total];
    idom[exit] = Some(exit);
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().skip(1) {
            // "Predecessors" in the reversed graph are the successors.
            let mut new: Option<usize> = None;
            for &s in &succ[v] {
                if idom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(x) => intersect(&idom, &rpo, x, s),
                });
            }
            if new.is_some() && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    idom.truncate(nb);
    idom
}

fn intersect(idom: &[Option<usize>], rpo: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rpo[a] > rpo[b] {
            match idom[a] {
                Some(x) => a = x,
                None => return b,
            }
        }
        while rpo[b] > rpo[a] {
            match idom[b] {
                Some(x) => b = x,
                None => return a,
            }
        }
    }
    a
}
