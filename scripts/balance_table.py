#!/usr/bin/env python3
"""Summarise scripts/balance_sweep.sh outputs: balance_table.py DIR [DIR2 ...] (one column group per DIR)."""
import json, os, sys, glob

def load(d, c, k):
    p = os.path.join(d, f"{c}.{k}.json")
    try:
        return json.load(open(p))
    except Exception:
        return None

def fmt_ball(m):
    if m is None:
        return "ERR"
    rec = m.get("recovery_time_s")
    if rec is not None:
        rec = f"{rec:.2f}"
    elif m.get("recovery") == "clip_ended":
        # still deviating when the clip ended, under 2 s after the hit: too soon to tell
        rec = f"clip-end+{m['after_last_hit_s']:.2f}"
    else:
        rec = "never"
    struck = "" if on_target(m) else f" hit:{m['balls'][0]['body']}"
    return (f"{100*m['root_peak_displacement_m']:.2f}cm {m['peak_deviation_deg']:.1f}° "
            f"{'FELL' if m['fell'] else 'up'} r{rec} s{m['foot_slip_mm']:.0f}{struck}")

def on_target(m):
    """The ball first struck the body it was aimed at (not a neighbour in the way)."""
    b = m["balls"][0]
    return b["body"] == b["aimed_at"]

def ok(m):
    if m is None: return False
    r = m.get("recovery_time_s")
    return (m["root_peak_displacement_m"] >= 0.01 and m["peak_deviation_deg"] >= 3 and m["foot_slip_mm"] <= 20
            and r is not None and r <= 2 and not m["fell"])

def reasons(m):
    """Which parts of the handball criterion a run misses."""
    r = m.get("recovery_time_s")
    out = []
    if m["fell"]: out.append("fell")
    if m["root_peak_displacement_m"] < 0.01: out.append("root<1cm")
    if m["peak_deviation_deg"] < 3: out.append("dev<3°")
    if m["foot_slip_mm"] > 20: out.append("slip>20mm")
    if not m["fell"] and (r is None or r > 2):
        out.append("clip ended" if m.get("recovery") == "clip_ended" else "not back in 2 s")
    return out

def by_time(d):
    """The runs of TIMES=... (OUTDIR/<clip>.<case>@<t>.json): pass rate over hit times."""
    runs = {}
    for p in glob.glob(os.path.join(d, "*@*.json")):
        name = os.path.basename(p)[:-5]
        clip, rest = name.split(".", 1)
        kind, t = rest.split("@")
        try:
            runs[(clip, kind, float(t))] = json.load(open(p))
        except Exception:
            runs[(clip, kind, float(t))] = None
    if not runs:
        return
    times = sorted({t for (_, _, t) in runs})
    print(f"\n== {d}: chest and pelvis balls at {' '.join(f'{t:g}' for t in times)} s "
          "(each time with 2 s of the clip after it)")
    for clip in sorted({c for (c, _, _) in runs}):
        for kind in ("chest", "pelvis"):
            cells = []
            for t in times:
                m = runs.get((clip, kind, t), False)
                if m is False:
                    continue
                if m is None:
                    cells.append(f"{t:g}:ERR")
                    continue
                cells.append(("✓" if ok(m) else "✗") + f"{t:g}:{100*m['root_peak_displacement_m']:.1f}cm/"
                             f"{m['peak_deviation_deg']:.1f}°" + ("" if ok(m) else "(" + ",".join(reasons(m)) + ")"))
            if cells:
                print(clip[:30].ljust(30), kind.ljust(6), " ".join(cells))
    for kind in ("chest", "pelvis", None):
        ms = [m for (c, k, t), m in runs.items() if kind in (None, k)]
        n_ok = sum(1 for m in ms if m and ok(m))
        miss = {}
        for m in ms:
            if m and not ok(m):
                for r in reasons(m):
                    miss[r] = miss.get(r, 0) + 1
        label = kind or "all"
        print(f"{label}: {n_ok}/{len(ms)} met ({100*n_ok/max(len(ms),1):.1f} %); misses: "
              + ", ".join(f"{r} {n}" for r, n in sorted(miss.items(), key=lambda x: -x[1])))
    # the slips again, of the weight-bearing feet only (loaded_foot_slip_mm: feet the
    # reference puts >= 20 % of the body weight on); the criterion keeps foot_slip_mm
    slips = sorted(((c, k, t), m) for (c, k, t), m in runs.items()
                   if m and m["foot_slip_mm"] > 20)
    if slips and all("loaded_foot_slip_mm" in m for _, m in slips):
        print(f"slip>20mm: {len(slips)} runs; of weight-bearing feet: "
              f"{sum(m['loaded_foot_slip_mm'] > 20 for _, m in slips)} over 20 mm; per run "
              "(all feet / weight-bearing, mm): "
              + ", ".join(f"{c[:12]} {k}@{t:g} {m['foot_slip_mm']:.0f}/{m['loaded_foot_slip_mm']:.1f}"
                          for (c, k, t), m in slips))

dirs = sys.argv[1:]
clips = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(dirs[0], "*.json"))
                if "@" not in os.path.basename(p)})
for d in dirs:
    print(f"== {d}")
    npass = 0
    for c in clips:
        row = [c[:34].ljust(34)]
        for k in ("chest", "pelvis"):
            m = load(d, c, k)
            npass += ok(m)
            row.append((("✓" if ok(m) else "✗") + fmt_ball(m)).ljust(40))
        h = load(d, c, "heavy")
        row.append("5kg:" + ("ERR" if h is None else ("FELL" if h["fell"] else "up")))
        s = load(d, c, "sim")
        if s is None:
            row.append("sim:ERR")
        else:
            rms = s.get("rms_error_deg", s.get("summary", {}).get("rms_error_deg"))
            row.append(f"sim:rms={rms} fell={s.get('fell')}")
        print(" ".join(row))
    strict = sum(ok(m) and on_target(m) for c in clips for k in ("chest", "pelvis")
                 for m in [load(d, c, k)] if m)
    print(f"handball criterion met: {npass}/{2*len(clips)} ({strict} with the ball on its target)")

# one line per DIR: how much broke
print("\nsummary: dir | criterion met (chest+pelvis) | chest≥1cm | handball falls | never recovered | root>10cm | slip>20mm | 5kg up | sim max rms° | sim falls")
for d in dirs:
    ms = [load(d, c, k) for c in clips for k in ("chest", "pelvis")]
    ms = [m for m in ms if m]
    chest = [load(d, c, "chest") for c in clips]
    hv = [load(d, c, "heavy") for c in clips]
    sm = [load(d, c, "sim") for c in clips]
    print(d.split("/")[-1], "|", sum(ok(m) for m in ms), "|",
          sum(1 for m in chest if m and m["root_peak_displacement_m"] >= 0.01), "|",
          sum(m["fell"] for m in ms), "|",
          sum(1 for m in ms if m["recovery_time_s"] is None and m["peak_deviation_deg"] > 0
              and m.get("recovery") != "clip_ended"), "|",
          sum(m["root_peak_displacement_m"] > 0.1 for m in ms), "|",
          sum(m["foot_slip_mm"] > 20 for m in ms), "|",
          sum(1 for h in hv if h and not h["fell"]), "|",
          "%.4f" % max([s["rms_error_deg"] for s in sm if s] or [float("nan")]), "|",
          sum(1 for s in sm if s and s["fell"]))
for d in dirs:
    by_time(d)
