// Scalar code: arith, math, scf (loops and branches of scalar values, whose bodies hold tile ops) and memref.dim,
// as C expressions bound to fresh names.
#include "EmitterImpl.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

std::string floatLiteral(double v, Type t) {
  float f = static_cast<float>(v);
  if (std::isnan(f))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(f))
    return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[64];
  snprintf(buf, sizeof buf, "%.9gf", f);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s.insert(s.size() - 1, ".0");
  if (t.isF64()) {
    snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  return s;
}

LogicalResult KernelEmitter::emitScalarOp(Operation *op) {
  auto bind = [&](const std::string &expr) {
    Value r = op->getResult(0);
    std::string n = fresh("v" + std::to_string(counter++));
    line() << "const " << cType(r.getType()) << " " << n << " = " << expr << ";\n";
    names[r] = n;
    return success();
  };
  auto bin = [&](const char *sym) { return bind(value(op->getOperand(0)) + " " + sym + " " + value(op->getOperand(1))); };
  auto call = [&](const std::string &fn) {
    std::string args;
    for (Value v : op->getOperands())
      args += (args.empty() ? "" : ", ") + value(v);
    return bind(fn + "(" + args + ")");
  };
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    Attribute a = c.getValue();
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      if (i.getType().isInteger(1)) {
        names[c.getResult()] = i.getValue().getBoolValue() ? "true" : "false";
        return success();
      }
      names[c.getResult()] = "(" + cType(i.getType()) + ")" + std::to_string(i.getValue().getSExtValue()) +
                             (i.getType().isInteger(32) ? "" : "LL");
      return success();
    }
    if (auto f = dyn_cast<FloatAttr>(a)) {
      std::string lit = floatLiteral(f.getValueAsDouble(), f.getType());
      if (f.getType().isBF16() || f.getType().isF16())
        lit = convert(lit, Float32Type::get(op->getContext()), f.getType());
      names[c.getResult()] = lit;
      return success();
    }
    return op->emitError("constant of this kind is not supported by the CUDA emitter yet");
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return bin("+"); })
      .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return bin("-"); })
      .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return bin("*"); })
      .Case<arith::DivFOp, arith::DivSIOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::RemFOp>([&](auto) { return call("fmodf"); })
      .Case<arith::AndIOp>([&](auto) { return bin(op->getResult(0).getType().isInteger(1) ? "&&" : "&"); })
      .Case<arith::OrIOp>([&](auto) { return bin(op->getResult(0).getType().isInteger(1) ? "||" : "|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin(op->getResult(0).getType().isInteger(1) ? "!=" : "^"); })
      .Case<arith::CeilDivSIOp>([&](auto) { return call("tilec::device::ceildiv"); })
      .Case<arith::FloorDivSIOp>([&](auto) { return call("tilec::device::floordiv"); })
      .Case<arith::MinSIOp>([&](auto) { return call("min"); })
      .Case<arith::MaxSIOp>([&](auto) { return call("max"); })
      .Case<arith::MaximumFOp>([&](auto) { return call("tilec::device::maximumf"); })
      .Case<arith::MinimumFOp>([&](auto) { return call("tilec::device::minimumf"); })
      .Case<arith::NegFOp>([&](auto) { return bind("-" + value(op->getOperand(0))); })
      .Case<arith::SelectOp>([&](arith::SelectOp s) {
        return bind(value(s.getCondition()) + " ? " + value(s.getTrueValue()) + " : " + value(s.getFalseValue()));
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
        const char *sym = "==";
        switch (c.getPredicate()) {
        case arith::CmpIPredicate::eq: sym = "=="; break;
        case arith::CmpIPredicate::ne: sym = "!="; break;
        case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: sym = "<"; break;
        case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: sym = "<="; break;
        case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: sym = ">"; break;
        case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: sym = ">="; break;
        }
        return bin(sym);
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) {
        std::string a = value(c.getLhs()), b = value(c.getRhs());
        switch (c.getPredicate()) {
        case arith::CmpFPredicate::OEQ: return bind(a + " == " + b);
        case arith::CmpFPredicate::UNE: return bind(a + " != " + b);
        case arith::CmpFPredicate::ONE: return bind("(" + a + " < " + b + " || " + a + " > " + b + ")");
        case arith::CmpFPredicate::OLT: return bind(a + " < " + b);
        case arith::CmpFPredicate::OLE: return bind(a + " <= " + b);
        case arith::CmpFPredicate::OGT: return bind(a + " > " + b);
        case arith::CmpFPredicate::OGE: return bind(a + " >= " + b);
        case arith::CmpFPredicate::ULT: return bind("!(" + a + " >= " + b + ")");
        case arith::CmpFPredicate::ULE: return bind("!(" + a + " > " + b + ")");
        case arith::CmpFPredicate::UGT: return bind("!(" + a + " <= " + b + ")");
        case arith::CmpFPredicate::UGE: return bind("!(" + a + " < " + b + ")");
        case arith::CmpFPredicate::UEQ: return bind("!(" + a + " < " + b + " || " + a + " > " + b + ")");
        case arith::CmpFPredicate::ORD: return bind("!isnan(" + a + ") && !isnan(" + b + ")");
        case arith::CmpFPredicate::UNO: return bind("isnan(" + a + ") || isnan(" + b + ")");
        case arith::CmpFPredicate::AlwaysTrue: return bind("true");
        case arith::CmpFPredicate::AlwaysFalse: return bind("false");
        }
        return failure();
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp, arith::SIToFPOp, arith::FPToSIOp,
            arith::ExtUIOp>([&](auto) {
        return bind("(" + cType(op->getResult(0).getType()) + ")(" + value(op->getOperand(0)) + ")");
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) {
        return bind(convert(value(op->getOperand(0)), op->getOperand(0).getType(), op->getResult(0).getType()));
      })
      .Case<math::Exp2Op>([&](auto) { return call("tilec::device::exp2_ftz"); })
      .Case<math::Log2Op>([&](auto) { return call("log2f"); })
      .Case<math::ExpOp>([&](auto) { return call("expf"); })
      .Case<math::LogOp>([&](auto) { return call("logf"); })
      .Case<math::SqrtOp>([&](auto) { return call("sqrtf"); })
      .Case<math::RsqrtOp>([&](auto) { return call("rsqrtf"); })
      .Case<math::TanhOp>([&](auto) { return call("tanhf"); })
      .Case<math::ErfOp>([&](auto) { return call("erff"); })
      .Case<math::SinOp>([&](auto) { return call("sinf"); })
      .Case<math::CosOp>([&](auto) { return call("cosf"); })
      .Case<math::FloorOp>([&](auto) { return call("floorf"); })
      .Case<math::CeilOp>([&](auto) { return call("ceilf"); })
      .Case<math::Log1pOp>([&](auto) { return call("log1pf"); })
      .Case<math::ExpM1Op>([&](auto) { return call("expm1f"); })
      .Case<math::PowFOp>([&](auto) { return call("powf"); })
      .Case<math::AbsFOp>([&](auto) { return call("fabsf"); })
      .Case<math::AbsIOp>([&](auto) { return call("llabs"); })
      .Case<memref::DimOp>([&](memref::DimOp d) -> LogicalResult {
        auto axis = d.getConstantIndex();
        if (!axis)
          return d.emitError("memref.dim with a dynamic axis is not supported by the CUDA emitter");
        names[d.getResult()] = buffer(d.getSource()).dims[*axis];
        return success();
      })
      .Default([&](Operation *o) {
        return o->emitError() << "'" << o->getName() << "' is not supported by the CUDA emitter yet";
      });
}

} // namespace tilec::cuda
