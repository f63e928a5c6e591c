/**
 * The history of the ratios part: each run's goals (the footprint's too) appended as one line
 * to bench-results/ratios-history.jsonl (git-ignored, as bench-results/ is), and the last three
 * runs of the same command side by side, so a closing note can quote a run with the two before
 * it.
 */
import { dirname } from "node:path";
import type { Footprint } from "./footprint.ts";
import { goalValue, withinLimit } from "./goals.ts";
import type { RatiosReport } from "./ratios_report.ts";

const HISTORY = "bench-results/ratios-history.jsonl";
/** Runs side by side at the end of the report: this one and the two before it. */
const HISTORY_RUNS = 3;

/** One run's line of bench-results/ratios-history.jsonl. */
export interface HistoryEntry {
  date: string;
  /** What ran: `deno task bench` or `scripts/bench_ratios.ts` alone. */
  command: string;
  durationS: number;
  /** The whole command's wall time, when known. */
  totalSeconds?: number;
  /**
   * The code measured: HEAD's short hash, `*` after it when tracked files had changes not
   * committed (several people work in one tree, so a run may measure others' work in progress).
   */
  commit?: string;
  /** Every goal: its value (a ratio, or ms), the bound, met. */
  goals: {
    figure: string;
    value: number;
    unit?: string;
    comparator: "≥" | "≤";
    target: number;
    met: boolean;
  }[];
  ratios: { figure: string; value: number }[];
}

/** The history line of a report: its goals, the ratios without one, and the footprint's. */
export function historyEntry(
  report: RatiosReport,
  command: string,
  totalSeconds?: number,
  commit?: string,
): HistoryEntry {
  const goals: HistoryEntry["goals"] = report.goals.map((g) => ({
    figure: g.figure,
    value: goalValue(g),
    ...(g.unit ? { unit: g.unit } : {}),
    comparator: g.comparator,
    target: g.target,
    met: g.met,
  }));
  const maxRss = (fp: Footprint | undefined): number | null => {
    const values = Object.values(fp?.rssMb ?? {});
    if (values.length === 0) return null;
    return values.some((v) => v === null) ? NaN : Math.max(...values as number[]);
  };
  const allWithin = (fp: Footprint): boolean =>
    Object.values(fp.rssMb).every((mb) => withinLimit(mb, fp.goalMbAtMost));
  const idleRss = maxRss(report.footprint.idle);
  const after = report.footprint.afterAllParts ?? report.footprint.afterThisPart;
  const afterRss = maxRss(after);
  if (idleRss !== null) {
    goals.push({
      figure: "largest process RSS, idle",
      value: idleRss,
      unit: "MB",
      comparator: "≤",
      target: report.footprint.idle.goalMbAtMost,
      met: allWithin(report.footprint.idle),
    });
  }
  if (afterRss !== null) {
    goals.push({
      // After every part under deno task bench, after this part's loads alone.
      figure: "largest process RSS, after the bench",
      value: afterRss,
      unit: "MB",
      comparator: "≤",
      target: after.goalMbAtMost,
      met: allWithin(after),
    });
  }
  goals.push({
    figure: "idle stack CPU, % of one core",
    value: report.idle.cpu.stackPctOfCore,
    unit: "%",
    comparator: "≤",
    target: report.idle.cpu.goalPctOfCoreAtMost,
    met: report.idle.cpu.met,
  });
  return {
    date: report.date,
    command,
    durationS: report.floors.proxy.durationS,
    ...(totalSeconds === undefined ? {} : { totalSeconds }),
    ...(commit === undefined ? {} : { commit }),
    goals,
    ratios: report.otherRatios.map((r) => ({ figure: r.figure, value: r.ratio })),
  };
}

/** HEAD's short hash, with `*` when tracked files differ from it; undefined without git. */
export async function codeVersion(): Promise<string | undefined> {
  const git = async (...args: string[]): Promise<string | undefined> => {
    try {
      const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" })
        .output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
    } catch {
      return undefined;
    }
  };
  const head = await git("rev-parse", "--short", "HEAD");
  if (head === undefined) return undefined;
  const changes = await git("status", "--porcelain", "--untracked-files=no");
  return changes ? `${head}*` : head;
}

/** The entries of a history file, oldest first; a line that is not one is skipped. */
export function parseHistory(text: string): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as HistoryEntry;
      if (typeof entry.date === "string" && Array.isArray(entry.goals)) entries.push(entry);
    } catch {
      // A line cut short (a run stopped while writing) or edited by hand.
    }
  }
  return entries;
}

/** Appends the entry to the history file; answers every entry in it, this one last. */
export async function appendHistory(entry: HistoryEntry, path = HISTORY): Promise<HistoryEntry[]> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(entry) + "\n", { append: true });
  return parseHistory(await Deno.readTextFile(path));
}

/**
 * `current` and the runs of the same command before it (`runs` in all), side by side, oldest on
 * the left: each goal's value with met (✓) or not (✗), then the ratios without a goal. Without
 * `current`, the last `runs` entries. Several people run benches in this working tree, alone
 * (shorter loads) or whole, so only runs of the same command are compared. Rows follow the
 * newest run's figures; a figure an older run did not have shows "–".
 */
export function formatHistory(
  entries: readonly HistoryEntry[],
  current?: HistoryEntry,
  runs = HISTORY_RUNS,
): string {
  let last = entries.slice(-runs);
  if (current) {
    const same = entries.filter((e) => e.command === current.command);
    const at = same.findLastIndex((e) => e.date === current.date);
    last = at < 0
      ? [...same.slice(-(runs - 1)), current]
      : same.slice(Math.max(0, at - runs + 1), at + 1);
  }
  if (last.length === 0) return "";
  const newest = last[last.length - 1]!;
  const width = 21;
  const figureWidth = 52;
  const value = (v: number, unit?: string): string =>
    !Number.isFinite(v)
      ? "–"
      : unit === "%"
      ? `${v.toFixed(2)} %`
      : unit
      ? `${v.toFixed(v < 100 ? 1 : 0)} ${unit}`
      : v.toFixed(2);
  const head = (e: HistoryEntry): string => `${e.date.slice(5, 16).replace("T", " ")}`;
  const lines = [
    `The last ${last.length} run${last.length === 1 ? "" : "s"}${
      current ? ` of ${current.command}` : ""
    } (${HISTORY}), oldest first; under each: task or alone, seconds per load, commit (* = ` +
    `with changes not committed)`,
    `${"".padEnd(figureWidth)}${last.map((e) => head(e).padStart(width)).join("")}   goal`,
    `${"".padEnd(figureWidth)}${
      last.map((e) =>
        `${e.command === "deno task bench" ? "task" : "alone"} ${e.durationS.toFixed(0)}s${
          e.commit ? ` ${e.commit}` : ""
        }`.padStart(width)
      ).join("")
    }`,
  ];
  for (const g of newest.goals) {
    const cells = last.map((e) => {
      const same = e.goals.find((x) => x.figure === g.figure);
      return (same ? `${value(same.value, same.unit)} ${same.met ? "✓" : "✗"}` : "–")
        .padStart(width);
    });
    const bound = g.unit
      ? `${g.comparator} ${g.target} ${g.unit}`
      : `${g.comparator} ${g.target.toFixed(2)}`;
    lines.push(
      `${g.figure.slice(0, figureWidth - 1).padEnd(figureWidth)}${cells.join("")}   ${bound}`,
    );
  }
  for (const r of newest.ratios) {
    const cells = last.map((e) => {
      const same = e.ratios.find((x) => x.figure === r.figure);
      return (same ? `${value(same.value)}  ` : "–").padStart(width);
    });
    lines.push(`${r.figure.slice(0, figureWidth - 1).padEnd(figureWidth)}${cells.join("")}   –`);
  }
  const met = last.map((e) => `${e.goals.filter((g) => g.met).length}/${e.goals.length}`);
  lines.push(`${"goals met".padEnd(figureWidth)}${met.map((m) => m.padStart(width)).join("")}`);
  const totals = last.map((e) =>
    e.totalSeconds === undefined ? "–" : `${(e.totalSeconds / 60).toFixed(1)} min`
  );
  lines.push(
    `${"whole command's wall time".padEnd(figureWidth)}${
      totals.map((t) => t.padStart(width)).join("")
    }`,
  );
  return lines.join("\n");
}
