r"""
Local support vector regression: a tube that widens where the series is volatile
================================================================================

LSVR (seed 004, ch. 6) replaces the SVR's fixed tube :math:`|y_i - f(x_i)| \le \epsilon`
by a *local* one, :math:`|y_i - f(x_i)| \le \epsilon\,\sqrt{w^\top\Sigma_i w}`, whose width
follows the local volatility of the data around :math:`x_i` (its :math:`k` neighbours on
each side, clamped at the ends of the series: errata S004-L1). The relaxed problem
(eqs. 6.13–6.15) is one SOCP. Here a series is predicted from its two previous values;
its second half is eight times as volatile as its first: the model is linear like an
SVR's, but the tube (shaded) is narrow where the series is calm and wide where it is not.
"""

import matplotlib.pyplot as plt
import numpy as np

from conicml.estimators import LSVRRegressor

rng = np.random.default_rng(0)
n = 160
volatility = np.where(np.arange(n) < n // 2, 0.05, 0.4)  # a calm half, then a volatile one
series = 1.0 + np.cumsum(volatility * rng.standard_normal(n))
p = 2  # predict s_t from (s_{t-1}, s_{t-2}), as in the thesis's financial series
X = np.column_stack([series[p - 1 - j:n - 1 - j] for j in range(p)])
y = series[p:]
t = np.arange(p, n)

lsvr = LSVRRegressor(epsilon=1.0, C=10.0, k=5).fit(X, y)
pred = lsvr.predict(X)
calm, wild = t < n // 2, t >= n // 2
print(f"w = {np.round(lsvr.coef_, 3)}, b = {lsvr.intercept_[0]:.3f}; "
      f"solution {lsvr.solution_.status.value}")
print(f"mean tube half-width: calm half {lsvr.tube_[calm].mean():.3f}, "
      f"volatile half {lsvr.tube_[wild].mean():.3f}")

fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
ax.fill_between(t, pred - lsvr.tube_, pred + lsvr.tube_, color="C0", alpha=0.25,
                label=r"local tube $\pm\epsilon\sqrt{w^\top\Sigma_i w}$")
ax.plot(t, pred, color="C0", lw=1.5, label="LSVR one-step prediction")
ax.plot(t, y, ".", color="k", ms=4, label="series")
ax.axvline(n // 2, color="0.6", lw=0.8)
ax.set_xlabel("t")
ax.set_ylabel(r"$s_t$")
ax.legend(loc="upper left", fontsize="small")
plt.show()
