/** Where every part's figures go: one JSON file each under bench-results/ (git-ignored). */
import { dirname } from "node:path";

/** Writes `report` as indented JSON to `path`, making its folder first. */
export async function writeResults(path: string, report: unknown): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
}
