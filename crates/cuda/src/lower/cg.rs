//! Cooperative groups (`namespace cg = cooperative_groups`): `thread_block` and
//! `thread_block_tile<N>` are compile-time handles with no run-time value; their members
//! lower to built-in arithmetic, barriers and warp shuffles [CUDA C++ Programming Guide,
//! "Cooperative Groups"].

use super::*;
use crate::ir::WarpOp;

/// A cooperative group known at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Group {
    /// `thread_block`: the whole block.
    Block,
    /// `thread_block_tile<N>`: consecutive `N` threads of the block in linear order
    /// (N a power of two ≤ 32).
    Tile(u32),
}

/// The last component of a possibly qualified name node (`cg::sync` → `sync`).
pub(super) fn unqualify(mut n: Node) -> Node {
    while n.kind() == "qualified_identifier" {
        match n.child_by_field_name("name") {
            Some(x) => n = x,
            None => break,
        }
    }
    n
}

impl<'t> Lowerer<'t> {
    /// The group a declaration's type names (`cg::thread_block`, `thread_block_tile<32>`).
    pub(super) fn group_type(&mut self, tn: Node, src: &str) -> Result<Option<Group>> {
        let tn = unqualify(tn);
        let name = match tn.kind() {
            "template_type" => tn
                .child_by_field_name("name")
                .map(|x| text(unqualify(x), src))
                .unwrap_or(""),
            _ => text(tn, src),
        };
        Ok(match name {
            "thread_block" | "thread_group" => Some(Group::Block),
            "thread_block_tile" => {
                let args = tn
                    .child_by_field_name("arguments")
                    .ok_or_else(|| self.err_at(tn, "thread_block_tile needs its size"))?;
                Some(Group::Tile(self.tile_size(args, src)?))
            }
            "grid_group" | "coalesced_group" | "multi_grid_group" | "cluster_group" => {
                return Err(self.unsupported(
                    tn,
                    format!("cooperative group {name} (thread_block and thread_block_tile are supported)"),
                ))
            }
            _ => None,
        })
    }

    /// `N` of a `<N>` template argument list: a power of two from 1 to 32.
    fn tile_size(&mut self, args: Node, src: &str) -> Result<u32> {
        let a = self.template_args(args, src)?;
        match a.as_slice() {
            [TArg::Int(k)] if (1..=32).contains(k) && (*k as u32).is_power_of_two() => {
                Ok(*k as u32)
            }
            _ => Err(self.err_at(
                args,
                "a thread_block_tile's size must be a power of two from 1 to 32",
            )),
        }
    }

    /// The group an expression denotes, if it is one: a group variable,
    /// `this_thread_block()`, `tiled_partition<N>(g)` or `tiled_partition(g, N)`.
    pub(super) fn group_of(&mut self, n: Node, src: &str) -> Result<Option<Group>> {
        match n.kind() {
            "identifier" => Ok(match self.lookup(text(n, src)) {
                Some(Var {
                    home: VarHome::Group(g),
                    ..
                }) => Some(g),
                _ => None,
            }),
            "parenthesized_expression" => match named_children(n).into_iter().next() {
                Some(c) => self.group_of(c, src),
                None => Ok(None),
            },
            "call_expression" => {
                let Some(f) = n.child_by_field_name("function") else {
                    return Ok(None);
                };
                let f = unqualify(f);
                let (name, targs) = match f.kind() {
                    "template_function" => (
                        f.child_by_field_name("name")
                            .map(|x| text(x, src))
                            .unwrap_or(""),
                        f.child_by_field_name("arguments"),
                    ),
                    "identifier" => (text(f, src), None),
                    _ => return Ok(None),
                };
                if self.fns.contains_key(name) {
                    return Ok(None);
                }
                let args = n
                    .child_by_field_name("arguments")
                    .map(named_children)
                    .unwrap_or_default();
                match name {
                    "this_thread_block" => Ok(Some(Group::Block)),
                    "tiled_partition" => {
                        let size = match (targs, args.get(1)) {
                            (Some(t), _) => self.tile_size(t, src)?,
                            (None, Some(k)) => {
                                let v = self.rvalue(*k, src)?;
                                match const_eval(&v) {
                                    Some(k) if (1..=32).contains(&k) && k.is_power_of_two() => {
                                        k as u32
                                    }
                                    _ => {
                                        return Err(self.err_at(
                                            *k,
                                            "tiled_partition's size must be a constant power of two from 1 to 32",
                                        ))
                                    }
                                }
                            }
                            _ => return Err(self.err_at(n, "tiled_partition needs a size")),
                        };
                        Ok(Some(Group::Tile(size)))
                    }
                    _ => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// A statement that is a block-wide barrier through a group: `cta.sync()`,
    /// `cg::sync(cta)`, `cg::this_thread_block().sync()`.
    pub(super) fn is_block_sync(&mut self, x: Node, src: &str) -> Result<bool> {
        if x.kind() != "call_expression" {
            return Ok(false);
        }
        let Some(f) = x.child_by_field_name("function") else {
            return Ok(false);
        };
        let args = x
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        if f.kind() == "field_expression" {
            let method = f.child_by_field_name("field").map(|m| text(m, src));
            if let (Some("sync"), Some(obj)) = (method, f.child_by_field_name("argument")) {
                return Ok(self.group_of(obj, src)? == Some(Group::Block));
            }
            return Ok(false);
        }
        let g = unqualify(f);
        if text(g, src) == "sync" && !self.fns.contains_key("sync") && args.len() == 1 {
            return Ok(self.group_of(args[0], src)? == Some(Group::Block));
        }
        Ok(false)
    }

    /// `cg::thread_block_tile<32> t = …;` parsed as the comparison `(a < 32) > t = …` (the
    /// parser does not know the template): binds `t` as the tile. Whether it was one.
    pub(super) fn misparsed_tile_decl(&mut self, x: Node, src: &str) -> Result<bool> {
        fn field<'a>(n: Node<'a>, f: &str) -> Option<Node<'a>> {
            n.child_by_field_name(f)
        }
        fn op(n: Node, want: &str) -> bool {
            n.child_by_field_name("operator")
                .is_some_and(|o| o.kind() == want)
        }
        // `((T < N) > t) = init` or `(T < N) > (t = init)`.
        let (lt, name, init) = if x.kind() == "assignment_expression" && op(x, "=") {
            let (Some(gt), Some(init)) = (field(x, "left"), field(x, "right")) else {
                return Ok(false);
            };
            if gt.kind() != "binary_expression" || !op(gt, ">") {
                return Ok(false);
            }
            let (Some(lt), Some(name)) = (field(gt, "left"), field(gt, "right")) else {
                return Ok(false);
            };
            (lt, name, init)
        } else if x.kind() == "binary_expression" && op(x, ">") {
            let (Some(lt), Some(asg)) = (field(x, "left"), field(x, "right")) else {
                return Ok(false);
            };
            if asg.kind() != "assignment_expression" || !op(asg, "=") {
                return Ok(false);
            }
            let (Some(name), Some(init)) = (field(asg, "left"), field(asg, "right")) else {
                return Ok(false);
            };
            (lt, name, init)
        } else {
            return Ok(false);
        };
        if lt.kind() != "binary_expression" || !op(lt, "<") || name.kind() != "identifier" {
            return Ok(false);
        }
        let (Some(ty), Some(size)) = (field(lt, "left"), field(lt, "right")) else {
            return Ok(false);
        };
        if text(unqualify(ty), src) != "thread_block_tile" {
            return Ok(false);
        }
        let v = self.rvalue(size, src)?;
        let k = match const_eval(&v) {
            Some(k) if (1..=32).contains(&k) && k.is_power_of_two() => k as u32,
            _ => {
                return Err(self.err_at(
                    size,
                    "a thread_block_tile's size must be a constant power of two from 1 to 32",
                ))
            }
        };
        match self.group_of(init, src)? {
            Some(Group::Tile(t)) if t == k => {}
            _ => {
                return Err(self.unsupported(
                    init,
                    format!("this initializer of a thread_block_tile<{k}> (use cg::tiled_partition<{k}>(block))"),
                ))
            }
        }
        self.bind(
            text(name, src),
            Var {
                ty: Ty::Void,
                home: VarHome::Group(Group::Tile(k)),
                read_only: false,
            },
        );
        Ok(true)
    }

    /// The thread's linear index in the block: `x + y·Dx + z·Dx·Dy` (`unsigned int`).
    fn linear_tid(&self, loc: Loc) -> Expr {
        let b = |x: Builtin| e(ExprKind::Builtin(x), UINT, loc);
        let bin = |op, a, c| e(ExprKind::Binary(op, Box::new(a), Box::new(c)), UINT, loc);
        let dxy = bin(BinOp::Mul, b(Builtin::BlockDim(0)), b(Builtin::BlockDim(1)));
        let y = bin(
            BinOp::Mul,
            b(Builtin::ThreadIdx(1)),
            b(Builtin::BlockDim(0)),
        );
        let z = bin(BinOp::Mul, b(Builtin::ThreadIdx(2)), dxy);
        bin(BinOp::Add, bin(BinOp::Add, b(Builtin::ThreadIdx(0)), y), z)
    }

    fn block_size(&self, loc: Loc) -> Expr {
        let b = |x: Builtin| e(ExprKind::Builtin(x), UINT, loc);
        let bin = |op, a, c| e(ExprKind::Binary(op, Box::new(a), Box::new(c)), UINT, loc);
        bin(
            BinOp::Mul,
            bin(BinOp::Mul, b(Builtin::BlockDim(0)), b(Builtin::BlockDim(1))),
            b(Builtin::BlockDim(2)),
        )
    }

    /// `g.method(args)` on a group.
    pub(super) fn group_method(
        &mut self,
        g: Group,
        method: &str,
        args: &[Node],
        n: Node,
        src: &str,
    ) -> Result<Expr> {
        let loc = self.loc(n);
        let k = |v: u64| e(ExprKind::Const(v), UINT, loc);
        let bin = |op, a, c| e(ExprKind::Binary(op, Box::new(a), Box::new(c)), UINT, loc);
        Ok(match (g, method) {
            (Group::Block, "thread_rank") => self.linear_tid(loc),
            (Group::Block, "size" | "num_threads") => self.block_size(loc),
            (Group::Block, "sync") => {
                return Err(self.unsupported(
                    n,
                    "a block barrier inside an expression; call it as a statement",
                ))
            }
            (Group::Tile(t), "thread_rank") => bin(BinOp::Rem, self.linear_tid(loc), k(t as u64)),
            (Group::Tile(t), "size" | "num_threads") => k(t as u64),
            (Group::Tile(t), "meta_group_rank") => {
                bin(BinOp::Div, self.linear_tid(loc), k(t as u64))
            }
            (Group::Tile(t), "meta_group_size") => bin(
                BinOp::Div,
                bin(BinOp::Add, self.block_size(loc), k(t as u64 - 1)),
                k(t as u64),
            ),
            // The block runs in lockstep: a tile's barrier orders nothing further.
            (Group::Tile(_), "sync") => e(ExprKind::Const(0), Ty::Void, loc),
            (Group::Tile(t), "shfl" | "shfl_up" | "shfl_down" | "shfl_xor") => {
                let op = match method {
                    "shfl" => WarpOp::ShflIdx,
                    "shfl_up" => WarpOp::ShflUp,
                    "shfl_down" => WarpOp::ShflDown,
                    _ => WarpOp::ShflXor,
                };
                if args.len() != 2 {
                    return Err(self.err_at(n, format!("{method} takes 2 arguments")));
                }
                let mut ops = vec![k(u32::MAX as u64)];
                for a in args {
                    ops.push(self.rvalue(*a, src)?);
                }
                ops.push(e(ExprKind::Const(t as u64), INT, loc));
                self.warp_expr(op, ops, n, loc)?
            }
            (Group::Tile(32), "ballot" | "any" | "all") => {
                let op = match method {
                    "ballot" => WarpOp::Ballot,
                    "any" => WarpOp::Any,
                    _ => WarpOp::All,
                };
                if args.len() != 1 {
                    return Err(self.err_at(n, format!("{method} takes 1 argument")));
                }
                let p = self.rvalue(args[0], src)?;
                self.warp_expr(op, vec![k(u32::MAX as u64), p], n, loc)?
            }
            (_, m) => {
                return Err(self.unsupported(
                    n,
                    format!("cooperative-group member '{m}' here (thread_rank, size, num_threads, sync, meta_group_rank, meta_group_size, shfl, shfl_up, shfl_down, shfl_xor; ballot/any/all on 32-thread tiles)"),
                ))
            }
        })
    }

    /// `cg::reduce(tile, v, cg::plus<T>())`: a butterfly of `log2 N` `shfl_xor` steps, every
    /// lane ending with the tile's result.
    pub(super) fn group_reduce(&mut self, args: &[Node], n: Node, src: &str) -> Result<Expr> {
        let loc = self.loc(n);
        let [gn, vn, opn] = args else {
            return Err(self.err_at(n, "cg::reduce takes (group, value, operator)"));
        };
        let Some(Group::Tile(t)) = self.group_of(*gn, src)? else {
            return Err(self.unsupported(
                n,
                "cg::reduce over something other than a thread_block_tile",
            ));
        };
        let v = self.rvalue(*vn, src)?;
        if !v.ty.is_arith() {
            return Err(self.err_at(*vn, "cg::reduce needs a number"));
        }
        let ty = promote(&v.ty);
        let v = self.convert(v, &ty, *vn)?;
        let op_text = text(*opn, src);
        let op = if op_text.contains("plus") {
            BinOp::Add
        } else if op_text.contains("less") {
            BinOp::Min
        } else if op_text.contains("greater") {
            BinOp::Max
        } else if op_text.contains("bit_and") {
            BinOp::BitAnd
        } else if op_text.contains("bit_or") {
            BinOp::BitOr
        } else if op_text.contains("bit_xor") {
            BinOp::BitXor
        } else {
            return Err(self.unsupported(
                *opn,
                "this reduction operator (cg::plus, cg::less, cg::greater, cg::bit_and, cg::bit_or, cg::bit_xor)",
            ));
        };
        let tmp = self.new_slot();
        let reg = || e(ExprKind::Reg(tmp), ty.clone(), loc);
        let set = |x: Expr| {
            e(
                ExprKind::SetReg {
                    slot: tmp,
                    value: Box::new(x),
                },
                ty.clone(),
                loc,
            )
        };
        let mut acc = set(v);
        let mut off = t / 2;
        while off >= 1 {
            let sh = e(
                ExprKind::Warp(
                    WarpOp::ShflXor,
                    vec![
                        e(ExprKind::Const(u32::MAX as u64), UINT, loc),
                        reg(),
                        e(ExprKind::Const(off as u64), INT, loc),
                        e(ExprKind::Const(t as u64), INT, loc),
                    ],
                ),
                ty.clone(),
                loc,
            );
            let step = set(e(
                ExprKind::Binary(op, Box::new(reg()), Box::new(sh)),
                ty.clone(),
                loc,
            ));
            acc = e(
                ExprKind::Seq(Box::new(acc), Box::new(step)),
                ty.clone(),
                loc,
            );
            off /= 2;
        }
        Ok(e(ExprKind::Seq(Box::new(acc), Box::new(reg())), ty, loc))
    }
}
