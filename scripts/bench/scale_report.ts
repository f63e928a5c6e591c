/**
 * The scale bench's results: each operation's goal (the largest ×10 p50 ÷ ×1 p50 the issue
 * allows for its kind), its ratio, the JSON `bench-results/scale.json` holds and the table printed.
 */
import type { OperationKind, SizeFigures } from "./scale_ops.ts";

/**
 * The goals by kind: 1.3 for GET by id, every write, cursor pages and first pages whose
 * count is not the cost; 2 for facets and search; none for a page far into an offset list.
 */
const GOALS: Readonly<Record<OperationKind, number | null>> = {
  control: null,
  "first-page": 1.3,
  "cursor-last": 1.3,
  get: 1.3,
  write: 1.3,
  bulk: 1.3,
  fanout: 1.3,
  search: 2,
  facets: 2,
  "offset-far": null,
};

/** A first page's rows growing past this from ×1 to ×10 means its totalCount is the cost. */
const GROWING = 1.5;

/** One operation measured at every size. */
export interface OperationResult {
  name: string;
  kind: OperationKind;
  /** Whether it is the first page of an offset list (which answers a count of every match). */
  counted: boolean;
  sizes: SizeFigures[];
}

/** The goal of an operation and why: a counted first page whose matches grow has none. */
export function goalOf(result: OperationResult): { goal: number | null; reason: string } {
  if ((result.kind === "first-page" || result.kind === "search") && result.counted) {
    const first = result.sizes[0]?.rows ?? NaN;
    const last = result.sizes.at(-1)?.rows ?? NaN;
    if (!(last <= first * GROWING)) {
      return {
        goal: null,
        reason: `counted ${result.kind === "search" ? "search" : "first page"}: its ` +
          "totalCount counts every match, and the matches grow with the data (reported, no " +
          "goal; its count=false twin has one)",
      };
    }
    if (result.kind === "first-page") {
      return { goal: GOALS["first-page"], reason: "first page whose matches do not grow" };
    }
  }
  if (result.kind === "offset-far") {
    return { goal: null, reason: "a page far into an offset list (reported, no goal)" };
  }
  if (result.kind === "control") {
    return { goal: null, reason: "control: reads no seeded row, its ratio is the machine's drift" };
  }
  return { goal: GOALS[result.kind], reason: result.kind };
}

/** ×10 p50 ÷ ×1 p50 (the last size over the first); null when either is missing. */
export function ratioOf(sizes: readonly SizeFigures[]): number | null {
  const first = sizes[0]?.p50;
  const last = sizes.at(-1)?.p50;
  if (first === undefined || last === undefined || !(first > 0) || !Number.isFinite(last)) {
    return null;
  }
  return last / first;
}

/**
 * The ratio with the machine's pace taken out: (×10 p50 ÷ its paired read's p50) over the same at
 * ×1. The paired read reads one row at every size, so what moves it is the machine, not the data.
 */
export function pairedRatioOf(sizes: readonly SizeFigures[]): number | null {
  const [first, last] = [sizes[0], sizes.at(-1)];
  const raw = ratioOf(sizes);
  const pace = first?.pairedP50 !== undefined && last?.pairedP50 !== undefined &&
      first.pairedP50 > 0 && last.pairedP50 > 0
    ? last.pairedP50 / first.pairedP50
    : null;
  return raw === null || pace === null ? null : raw / pace;
}

/** A figure for JSON: rounded to µs, null when not measured. */
const figure = (n: number): number | null =>
  Number.isFinite(n) ? Math.round(n * 1000) / 1000 : null;

/** One operation as bench-results/scale.json holds it (exactly the keys). */
export interface ScaleOperation {
  name: string;
  goal: number | null;
  sizes: { rows: number | null; p50: number | null; p99: number | null }[];
  ratio: number | null;
}

/** What each operation's entry does not say: its kind, samples, notes and failures. */
export interface OperationDetail {
  name: string;
  kind: OperationKind;
  goalReason: string;
  met: boolean | null;
  /** The ratio beside the paired read (pairedRatioOf), and the goal judged on it. */
  pairedRatio: number | null;
  metPaired: boolean | null;
  sizes: { samples: number; pairedP50?: number; note?: string; error?: string }[];
}

export function scaleOperations(
  results: readonly OperationResult[],
): { operations: ScaleOperation[]; details: OperationDetail[] } {
  const operations: ScaleOperation[] = [];
  const details: OperationDetail[] = [];
  for (const result of results) {
    const { goal, reason } = goalOf(result);
    const ratio = ratioOf(result.sizes);
    const paired = pairedRatioOf(result.sizes);
    operations.push({
      name: result.name,
      goal,
      sizes: result.sizes.map((s) => ({
        rows: figure(s.rows),
        p50: figure(s.p50),
        p99: figure(s.p99),
      })),
      ratio: ratio === null ? null : Math.round(ratio * 1000) / 1000,
    });
    details.push({
      name: result.name,
      kind: result.kind,
      goalReason: reason,
      met: goal === null ? null : ratio !== null && ratio <= goal,
      pairedRatio: paired === null ? null : Math.round(paired * 1000) / 1000,
      metPaired: goal === null || paired === null ? null : paired <= goal,
      sizes: result.sizes.map((s) => ({
        samples: s.samples,
        ...(s.pairedP50 !== undefined ? { pairedP50: figure(s.pairedP50)! } : {}),
        ...(s.note ? { note: s.note } : {}),
        ...(s.error ? { error: s.error } : {}),
      })),
    });
  }
  return { operations, details };
}

/** Checks `value` has the shape; answers what is wrong, nothing when it is right. */
export function shapeProblems(value: unknown, sizes: number): string[] {
  const problems: string[] = [];
  const ops = (value as { operations?: unknown })?.operations;
  if (!Array.isArray(ops) || ops.length === 0) return ["operations is not a non-empty array"];
  const isNumberOrNull = (v: unknown): boolean => v === null || typeof v === "number";
  for (const [i, op] of ops.entries()) {
    const o = op as Record<string, unknown>;
    const keys = Object.keys(o).sort().join(",");
    if (keys !== "goal,name,ratio,sizes") problems.push(`operations[${i}] has keys ${keys}`);
    if (typeof o.name !== "string") problems.push(`operations[${i}].name is not a string`);
    if (!isNumberOrNull(o.goal)) problems.push(`${o.name}: goal is not a number or null`);
    if (!isNumberOrNull(o.ratio)) problems.push(`${o.name}: ratio is not a number or null`);
    if (!Array.isArray(o.sizes) || o.sizes.length !== sizes) {
      problems.push(`${o.name}: sizes is not an array of ${sizes}`);
      continue;
    }
    for (const s of o.sizes as Record<string, unknown>[]) {
      const k = Object.keys(s).sort().join(",");
      if (k !== "p50,p99,rows") problems.push(`${o.name}: a size has keys ${k}`);
      for (const key of ["rows", "p50", "p99"]) {
        if (!isNumberOrNull(s[key])) problems.push(`${o.name}: ${key} is not a number or null`);
      }
    }
  }
  return problems;
}

const ms = (n: number | null): string => n === null ? "—" : n < 10 ? n.toFixed(2) : n.toFixed(1);
const rowsText = (n: number | null): string =>
  n === null ? "—" : n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n);

/** The table: per operation its rows, p50 and p99 at each size, the ratio and the goal. */
export function formatScaleTable(
  operations: readonly ScaleOperation[],
  details: readonly OperationDetail[],
  multiples: readonly number[],
): string {
  const width = Math.min(96, Math.max(...operations.map((o) => o.name.length)));
  const head = multiples.map((m) => `×${m} rows    p50    p99`.padStart(24)).join("");
  const lines = [
    `${"operation".padEnd(width)}${head}   ratio  goal        paired`,
  ];
  for (const [i, op] of operations.entries()) {
    const d = details[i]!;
    const cells = op.sizes.map((s) =>
      `${rowsText(s.rows).padStart(10)}${ms(s.p50).padStart(7)}${ms(s.p99).padStart(7)}`
    ).join("");
    const ratio = op.ratio === null ? "—" : op.ratio.toFixed(2);
    const verdict = d.met === null ? "" : d.met ? "met" : "OVER";
    const paired = d.pairedRatio === null ? "" : d.pairedRatio.toFixed(2);
    const pairedVerdict = d.metPaired === null ? "" : d.metPaired ? " met" : " OVER";
    const name = op.name.length > width ? `${op.name.slice(0, width - 1)}…` : op.name;
    lines.push(
      `${name.padEnd(width)}${cells}${ratio.padStart(8)}${
        (op.goal === null ? "—" : String(op.goal)).padStart(6)
      }  ${verdict.padEnd(4)}${paired.padStart(8)}${pairedVerdict}`.trimEnd(),
    );
  }
  const over = details.filter((d) => d.met === false).length;
  const overPaired = details.filter((d) => d.metPaired === false).length;
  const judgedPaired = details.filter((d) => d.metPaired !== null).length;
  const failed = details.filter((d) => d.sizes.some((s) => s.error)).length;
  lines.push(
    "",
    `${operations.length} operations; ${details.filter((d) => d.met).length} within their goal, ` +
      `${over} over it, ${details.filter((d) => d.met === null).length} with no goal` +
      (failed > 0 ? `; ${failed} FAILED at some size` : ""),
    "p50/p99 in ms of sequential requests through the gateway; ratio = ×10 p50 ÷ ×1 p50",
    ...(judgedPaired > 0
      ? [
        `paired = the ratio over the paired read's (one row read after every sample, so the ` +
        `machine's pace is taken out): ${judgedPaired - overPaired} within their goal, ` +
        `${overPaired} over it`,
      ]
      : []),
  );
  return lines.join("\n");
}
