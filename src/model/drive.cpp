// heom::DriveShape: the time dependence of a drive term, its validation and its description.
#include "heom/model/drive.hpp"

#include <cmath>
#include <sstream>
#include <utility>

#include "heom/core/cubic_spline.hpp"
#include "heom/core/error.hpp"

namespace heom {

struct DriveShape::Shape {
  enum class Kind { cosine, gaussian, constant, table, function };
  Kind kind = Kind::cosine;
  double amplitude = 0.0, frequency = 0.0, phase = 0.0, center = 0.0, width = 0.0, start = 0.0, end = 0.0;
  impl::CubicSpline real_part, imag_part;  // a table's
  bool real = true;
  std::function<complex(double)> f;  // a function's
  std::string name;
};

namespace {

void require_finite(double x, const char* shape, const char* what) {
  require(std::isfinite(x), std::string(shape) + " drive: " + what + " must be finite, got " + format_number(x));
}

}  // namespace

DriveShape DriveShape::cosine(double amplitude, double frequency, double phase) {
  require_finite(amplitude, "cosine", "the amplitude");
  require_finite(frequency, "cosine", "the frequency");
  require_finite(phase, "cosine", "the phase");
  Shape s;
  s.kind = Shape::Kind::cosine;
  s.amplitude = amplitude;
  s.frequency = frequency;
  s.phase = phase;
  return DriveShape(std::make_shared<const Shape>(std::move(s)));
}

DriveShape DriveShape::gaussian(double amplitude, double center, double width, double frequency, double phase) {
  require_finite(amplitude, "gaussian", "the amplitude");
  require_finite(center, "gaussian", "the center");
  require(std::isfinite(width) && width > 0.0,
          "gaussian drive: the width must be finite and > 0, got " + format_number(width));
  require_finite(frequency, "gaussian", "the frequency");
  require_finite(phase, "gaussian", "the phase");
  Shape s;
  s.kind = Shape::Kind::gaussian;
  s.amplitude = amplitude;
  s.center = center;
  s.width = width;
  s.frequency = frequency;
  s.phase = phase;
  return DriveShape(std::make_shared<const Shape>(std::move(s)));
}

DriveShape DriveShape::constant(double amplitude, double start, double end) {
  require_finite(amplitude, "constant", "the amplitude");
  require_finite(start, "constant", "the start");
  require(end > start && !std::isnan(end), "constant drive: the end (" + format_number(end) +
                                               ") must come after the start (" + format_number(start) + ")");
  Shape s;
  s.kind = Shape::Kind::constant;
  s.amplitude = amplitude;
  s.start = start;
  s.end = end;
  return DriveShape(std::make_shared<const Shape>(std::move(s)));
}

DriveShape DriveShape::table(std::vector<double> times, std::vector<complex> values) {
  require(times.size() == values.size(),
          "table drive: " + std::to_string(times.size()) + " times but " + std::to_string(values.size()) + " values");
  require(times.size() >= 2, "table drive: needs at least 2 samples");
  std::vector<double> re(values.size()), im(values.size());
  bool real = true;
  for (std::size_t i = 0; i < times.size(); ++i) {
    require(std::isfinite(times[i]), "table drive: times[" + std::to_string(i) + "] is not finite");
    require(std::isfinite(values[i].real()) && std::isfinite(values[i].imag()),
            "table drive: values[" + std::to_string(i) + "] is not finite");
    require(i == 0 || times[i] > times[i - 1], "table drive: times must increase, but times[" + std::to_string(i) +
                                                   "] = " + format_number(times[i]) + " follows " +
                                                   format_number(times[i - 1]));
    re[i] = values[i].real();
    im[i] = values[i].imag();
    real = real && im[i] == 0.0;
  }
  Shape s;
  s.kind = Shape::Kind::table;
  s.real_part = impl::CubicSpline(times, std::move(re));
  s.imag_part = impl::CubicSpline(std::move(times), std::move(im));
  s.real = real;
  return DriveShape(std::make_shared<const Shape>(std::move(s)));
}

DriveShape DriveShape::function(std::function<complex(double)> f, std::string name, bool real) {
  require(static_cast<bool>(f), "function drive: the function is empty");
  require(!name.empty(), "function drive: needs a name (checkpoints and the plan identify it by it)");
  Shape s;
  s.kind = Shape::Kind::function;
  s.f = std::move(f);
  s.name = std::move(name);
  s.real = real;
  return DriveShape(std::make_shared<const Shape>(std::move(s)));
}

complex DriveShape::operator()(double t, TimeSide side) const {
  const Shape& s = *m_shape;
  switch (s.kind) {
    case Shape::Kind::cosine:
      return s.amplitude * std::cos(s.frequency * t + s.phase);
    case Shape::Kind::gaussian: {
      const double x = (t - s.center) / s.width;
      return s.amplitude * std::exp(-0.5 * x * x) * std::cos(s.frequency * (t - s.center) + s.phase);
    }
    case Shape::Kind::constant: {
      const bool on = side == TimeSide::after ? (t >= s.start && t < s.end) : (t > s.start && t <= s.end);
      return on ? s.amplitude : 0.0;
    }
    case Shape::Kind::table: {
      const double first = s.real_part.x().front(), last = s.real_part.x().back();
      const double at = t < first ? first : (t > last ? last : t);
      return {s.real_part(at), s.imag_part(at)};
    }
    case Shape::Kind::function: {
      const complex value = s.f(t);
      if (!std::isfinite(value.real()) || !std::isfinite(value.imag()))
        throw Error("drive \"" + s.name + "\" returned a non-finite value at t = " + format_number(t));
      if (s.real && value.imag() != 0.0)
        throw Error("drive \"" + s.name + "\" was declared real but returned " + format_number(value.real()) + " + " +
                    format_number(value.imag()) + "i at t = " + format_number(t));
      return value;
    }
  }
  return 0.0;
}

bool DriveShape::is_real() const { return m_shape->real; }

std::vector<double> DriveShape::breakpoints() const {
  const Shape& s = *m_shape;
  if (s.kind == Shape::Kind::constant)
    return std::isfinite(s.end) ? std::vector<double>{s.start, s.end} : std::vector<double>{s.start};
  if (s.kind == Shape::Kind::table) return {s.real_part.x().front(), s.real_part.x().back()};
  return {};
}

std::string DriveShape::describe(const Shape& s, int digits, bool hex) {
  std::ostringstream out;
  if (hex)
    out << std::hexfloat;
  else
    out.precision(digits);
  switch (s.kind) {
    case Shape::Kind::cosine:
      out << "cosine (amplitude " << s.amplitude << ", frequency " << s.frequency << ", phase " << s.phase << ")";
      break;
    case Shape::Kind::gaussian:
      out << "gaussian (amplitude " << s.amplitude << ", center " << s.center << ", width " << s.width << ", frequency "
          << s.frequency << ", phase " << s.phase << ")";
      break;
    case Shape::Kind::constant:
      out << "constant (amplitude " << s.amplitude << " from t = " << s.start << " to " << s.end << ")";
      break;
    case Shape::Kind::table: {
      const auto& t = s.real_part.x();
      out << "table (" << t.size() << " samples, t = " << t.front() << " to " << t.back() << (s.real ? "" : ", complex")
          << ")";
      if (hex)
        for (std::size_t i = 0; i < t.size(); ++i)
          out << ' ' << t[i] << ' ' << s.real_part.y()[i] << ' ' << s.imag_part.y()[i];
      break;
    }
    case Shape::Kind::function:
      out << "function \"" << s.name << "\"" << (s.real ? "" : " (complex)");
      break;
  }
  return out.str();
}

std::string DriveShape::description() const { return describe(*m_shape, 6, false); }
std::string DriveShape::exact_description() const { return describe(*m_shape, 17, true); }

}  // namespace heom
