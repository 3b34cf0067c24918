#include "solver/problem.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>

#include "io/errors.hpp"
#include "solver/media.hpp"

namespace heatwave {

long Problem::global_points() const {
  long n = 1;
  for (int a = 0; a < dims; ++a) n *= points[a];
  return n;
}

double Problem::stability_number_for(double step) const {
  double inverse_h2 = 0;
  for (int a = 0; a < dims; ++a) inverse_h2 += 1.0 / (spacing[a] * spacing[a]);
  return with_equation(equation, [&]<class Eq>() { return Eq::stability_number(coefficients, step, inverse_h2); });
}

// Von Neumann limits of the highest grid mode (docs/design.md, Numerics).
double Problem::stability_limit() const {
  return with_equation(equation, [&]<class Eq>() { return Eq::stability_limit(radius); });
}

std::string Problem::stability_rule() const {
  return with_equation(equation, [&]<class Eq>() { return std::string(Eq::stability_rule(radius)); });
}

Problem Problem::from(const Config& config) {
  Problem p;
  p.source = config.source;
  p.equation = config.equation;
  p.precision = config.precision;
  p.dims = config.dims;
  p.radius = config.radius;
  p.length = config.length;
  p.coefficients = config.coefficients;
  p.faces = config.boundary;
  p.initial = config.initial;
  p.velocity = config.velocity;
  for (int a = 0; a < p.dims; ++a) {
    p.points[a] = config.points[a];
    p.periodic[a] = config.boundary[a][0].type == BoundaryType::periodic;
    p.spacing[a] = config.length[a] / static_cast<double>(p.periodic[a] ? p.points[a] : p.points[a] - 1);
  }

  // Media: each coefficient field's extremes (reading and checking its file);
  // the largest value is the one the stability limit takes.
  p.material = config.material;
  // Absorbing faces: the damped wave with gamma(x) growing into their layers
  // (the wave's gamma is 0 elsewhere), gamma a field even where it was a constant.
  if (has_absorbing_faces(p)) {
    if (p.equation == Equation::wave) p.equation = Equation::damped_wave, p.coefficients.set("gamma", 0.0);
    if (!p.material.count("gamma")) {
      Medium constant;
      constant.type = MediumType::constant;
      constant.value = p.coefficients.get("gamma");
      p.material["gamma"] = constant;
    }
  }
  p.sources = config.sources;
  std::string extremes;
  for (const CoefficientSpec& spec : info(p.equation).coefficients) {
    const auto it = p.material.find(spec.key);
    if (it == p.material.end()) continue;
    ValueRange range = medium_range(config.source, spec, it->second, p.points, p.dims);
    if (spec.key == std::string_view("gamma"))
      for (int a = 0; a < p.dims; ++a) range.max += absorbing_gamma_max(p, a, 0) + absorbing_gamma_max(p, a, 1);
    p.material_range[spec.key] = {range.min, range.max};
    p.coefficients.set(spec.key, range.max);
    std::ostringstream e;
    e.precision(6);
    e << "; " << spec.key << " (material." << spec.key << ", " << to_string(it->second.type) << ") ranges over ["
      << range.min << ", " << range.max << "], and the limit takes its largest value";
    extremes += e.str();
  }
  for (std::size_t i = 0; i < p.sources.size(); ++i)
    if (p.sources[i].type == SourceType::field)
      check_field_file(config.source + ": 'sources[" + std::to_string(i) + "].path'", p.sources[i].path,
                       p.sources[i].dataset, p.points, p.dims, "a source");
  for (const auto& [key, field] : {std::pair{"initial", std::optional(p.initial)}, std::pair{"velocity", p.velocity}})
    if (field && field->type == InitialType::file)
      check_field_file(config.source + ": '" + key + ".path'", field->path, field->dataset, p.points, p.dims,
                       "an initial field");

  const double dt_max = p.stability_limit() / p.stability_number_for(1.0);
  // A length of 1e-300 (or 1e300) leaves 1/h^2 past what a double holds: no dt steps it.
  if (!(std::isnormal(dt_max) && std::isnormal(p.stability_number_for(1.0)))) {
    std::ostringstream m;
    m.precision(6);
    m << config.source << ": 'grid.length' gives a grid spacing of";
    for (int a = 0; a < p.dims; ++a) m << (a ? ", " : " ") << p.spacing[a];
    m << ", whose 1/h^2 a double cannot hold (the stable dt would be " << dt_max
      << "): give the lengths in units that keep h between about 1e-100 and 1e100";
    throw Error(ExitCode::invalid_value, m.str());
  }
  std::ostringstream msg;
  msg.precision(6);
  if (config.dt) {
    const double number = p.stability_number_for(*config.dt);
    if (number > p.stability_limit() * (1 + 1e-12)) {
      msg << config.source << ": 'time.dt' = " << *config.dt << " is past the stability limit of the "
          << to_string(config.equation) << " equation with stencil radius " << config.radius << ": "
          << p.stability_rule() << " requires dt <= " << dt_max << " (here the number is " << number << ")" << extremes;
      throw Error(ExitCode::unstable, msg.str());
    }
    p.dt = *config.dt;
  } else {
    p.dt = config.dt_safety * dt_max;
  }

  // The step count, checked before it becomes an integer: a dt of 1e-300
  // would wrap a long. 2^53 steps is where a double stops counting them exactly.
  constexpr double max_steps = max_exact_count;
  auto refuse_count = [&](double count, const std::string& why) {
    std::ostringstream m;
    m.precision(6);
    m << config.source << ": " << why << " = " << count
      << " steps, more than heatwave can count (at most 2^53 = " << max_steps
      << "): is dt or t_end off by orders of magnitude?";
    throw Error(ExitCode::invalid_value, m.str());
  };
  if (config.steps) {
    if (static_cast<double>(*config.steps) > max_steps)
      refuse_count(static_cast<double>(*config.steps), "'time.steps'");
    p.steps = *config.steps;
    p.t_end = p.steps * p.dt;
  } else {
    if (!(*config.t_end / p.dt <= max_steps)) refuse_count(*config.t_end / p.dt, "'time.t_end' / dt");
    const double t_end = *config.t_end;
    if (config.dt) {
      // An explicit dt is the user's choice: we do not change it behind their back.
      const double n = std::round(t_end / p.dt);
      if (n < 1 || std::abs(n * p.dt - t_end) > 1e-9 * t_end) {
        const long up = static_cast<long>(std::ceil(t_end / p.dt));
        msg << config.source << ": 'time.t_end' = " << t_end
            << " is not a whole number of steps of 'time.dt' = " << p.dt << " (" << t_end / p.dt
            << " steps); use dt: auto, or dt = t_end/" << up << " = " << t_end / up << ", or steps: " << up;
        throw Error(ExitCode::t_end_mismatch, msg.str());
      }
      p.steps = static_cast<long>(n);
    } else {
      // dt: auto shrinks the step just enough that whole steps land on t_end.
      p.steps = static_cast<long>(std::ceil(t_end / p.dt));
      p.dt = t_end / static_cast<double>(p.steps);
    }
    p.t_end = t_end;
  }
  return p;
}

Problem Problem::from(const Config& config, const RestartClock& clock, bool new_dt) {
  Problem p = from(config);
  if (config.steps && *config.steps < clock.step)
    throw Error(ExitCode::invalid_value,
                config.source + ": 'time.steps' = " + std::to_string(*config.steps) +
                    " is before the checkpoint's step " + std::to_string(clock.step) +
                    ": a run does not go back; raise steps or restart from an earlier checkpoint");
  const double left = p.t_end - clock.time, tolerance = 1e-12 * std::max(std::abs(p.t_end), std::abs(clock.time));
  if (!config.steps && left < -tolerance) {
    std::ostringstream msg;
    msg.precision(10);
    msg << config.source << ": 'time.t_end' = " << p.t_end << " is before the checkpoint's t = " << clock.time
        << " (step " << clock.step << "): a run does not go back; raise t_end or restart from an earlier checkpoint";
    throw Error(ExitCode::invalid_value, msg.str());
  }
  if (p.dt == clock.dt && clock.time == static_cast<double>(clock.step) * p.dt) return p;  // its own schedule
  // Time goes on from the checkpoint: what the config's dt rule gives from
  // there (dt: auto with t_end lands on t_end from the checkpoint's time).
  Problem resumed = p;
  resumed.start_step = clock.step, resumed.start_time = clock.time;
  if (!config.steps && left <= tolerance) {  // already at t_end: nothing to run
    resumed.dt = clock.dt, resumed.steps = clock.step, resumed.t_end = clock.time;
    return resumed;
  }
  if (!config.steps && !config.dt) {
    const double dt_max = p.stability_limit() / p.stability_number_for(1.0);
    resumed.dt = left / std::max(1.0, std::ceil(left / (config.dt_safety * dt_max)));
  }
  std::ostringstream msg;
  msg.precision(10);
  if (std::abs(resumed.dt - clock.dt) <= 1e-9 * clock.dt) {
    resumed.dt = clock.dt;  // the checkpoint's, to the bit: the same step up to rounding
  } else if (!new_dt) {
    msg << config.source << ": the checkpoint was written with dt = " << clock.dt << " (step " << clock.step
        << ", t = " << clock.time << "), this config gives dt = " << resumed.dt
        << (config.dt ? "" : " (dt: auto, from t_end or the grid)")
        << ": every later time would be off. Restart with --new-dt to go on from t = " << clock.time
        << " with the new dt";
    throw Error(ExitCode::incompatible_checkpoint, msg.str());
  }
  if (config.steps) {
    resumed.t_end = resumed.time_at(resumed.steps);
  } else {  // whole steps from the checkpoint's time to t_end
    const double n = std::round(left / resumed.dt);
    if (n < 0 || std::abs(n * resumed.dt - left) > 1e-9 * std::max(std::abs(left), resumed.dt)) {
      msg << config.source << ": 'time.t_end' = " << p.t_end << " is not a whole number of steps of dt = " << resumed.dt
          << " after the checkpoint's t = " << clock.time << " (step " << clock.step << ")";
      throw Error(ExitCode::t_end_mismatch, msg.str());
    }
    resumed.steps = clock.step + static_cast<long>(n);
  }
  return resumed;
}

std::vector<std::string> check_sources(const Problem& p) {
  std::vector<std::string> warnings;
  const bool wave = info(p.equation).levels == 2;
  double c_min = 0, h_max = 0;
  if (wave) {
    const auto range = p.material_range.find("c");
    c_min = range != p.material_range.end() ? range->second.first : p.coefficients.get("c");
    for (int a = 0; a < p.dims; ++a) h_max = std::max(h_max, p.spacing[a]);
  }
  // Points a wavelength for small dispersion, by radius (order 2, 4, 6, 8).
  constexpr double points_by_radius[max_radius] = {10, 6, 5, 4};
  const double points_wanted = points_by_radius[p.radius - 1], samples_wanted = 10;
  for (std::size_t i = 0; i < p.sources.size(); ++i) {
    const TimeFunction& f = p.sources[i].time;
    // A bump or a pulse narrower than the grid's or the clock's step falls between the samples: it injects nothing.
    std::ostringstream narrow;
    narrow.precision(4);
    narrow << p.source << ": 'sources[" << i << "].";
    if (p.sources[i].type == SourceType::gaussian) {
      const int a = static_cast<int>(std::max_element(p.spacing.begin(), p.spacing.begin() + p.dims) - p.spacing.begin());
      if (p.sources[i].width < p.spacing[a]) {
        narrow << "width' = " << p.sources[i].width << " is narrower than the grid spacing h = " << p.spacing[a]
               << " (along " << axis_names[a]
               << "): the grid cannot resolve it, and it injects at one point at most (none where its centre is off "
                  "the points); widen it to h or more, or use a point source";
        throw Error(ExitCode::invalid_value, narrow.str());
      }
    }
    if (f.type == TimeFunctionType::gaussian && f.width < p.dt) {
      narrow << "time.width' = " << f.width << " (gaussian) is narrower than the time step dt = " << p.dt
             << ": the steps sample the pulse once at most (none where its delay is off the steps); widen it to dt "
                "or more, or lower dt";
      throw Error(ExitCode::invalid_value, narrow.str());
    }
    if (f.type != TimeFunctionType::ricker && f.type != TimeFunctionType::sine) continue;
    const double time_nyquist = 1 / (2 * p.dt), samples = 1 / (f.frequency * p.dt);
    std::ostringstream at;
    at.precision(4);
    at << p.source << ": 'sources[" << i << "].time.frequency' = " << f.frequency << " (" << to_string(f.type) << ")";
    if (f.frequency > time_nyquist) {
      at << " is past the Nyquist limit of the time step, 1/(2 dt) = " << time_nyquist << " (dt = " << p.dt
         << "): the run cannot carry it; lower the frequency or dt";
      throw Error(ExitCode::invalid_value, at.str());
    }
    if (wave && c_min > 0) {
      const double grid_nyquist = c_min / (2 * h_max), points = c_min / f.frequency / h_max;
      if (f.frequency > grid_nyquist) {
        at << " is past the grid's Nyquist limit c_min/(2 h) = " << grid_nyquist << " (c_min = " << c_min
           << ", h = " << h_max << "; " << points
           << " points a wavelength): the grid cannot carry it; lower the frequency or refine the grid";
        throw Error(ExitCode::invalid_value, at.str());
      }
      if (points < points_wanted) {
        at << " gives " << points << " grid points a wavelength at c_min = " << c_min << " (h = " << h_max
           << "; the grid's Nyquist limit is " << grid_nyquist << "; radius " << p.radius << " wants " << points_wanted
           << " or more): expect numerical dispersion; refine the grid, raise the stencil radius or lower the frequency";
        warnings.push_back(at.str());
        continue;
      }
    }
    if (samples < samples_wanted) {
      at << " gives " << samples << " time steps a period (dt = " << p.dt << ", Nyquist limit " << time_nyquist
         << "): its waveform is sampled coarsely; lower dt or the frequency";
      warnings.push_back(at.str());
    }
  }
  return warnings;
}

}  // namespace heatwave
