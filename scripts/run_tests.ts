/**
 * `deno task test`: one throwaway PostgreSQL cluster for the whole run (each test makes its own
 * database on it), then every test file, then the cluster is stopped. Contract checks are on for
 * every test and every process a test starts. Extra arguments go to `deno test` (e.g. a file or
 * `--filter`).
 *
 * Every temporary folder a test makes goes in one folder of the run (TMPDIR), removed at the end
 * with any cluster a test's data directory linked to under /var/tmp; the run then fails if it
 * left anything else behind there (PostgreSQL binaries staged once per version are expected).
 *
 * Browser tests need Debian's Chromium, the proxy test Debian's HAProxy and the gateway's
 * allocator tests Debian's libjemalloc2: they are installed first when missing and the run is
 * root's (CI's is); otherwise one line says how, and those tests fail with that same line.
 */
import { CHROMIUM_PATH, chromiumMissingMessage } from "@printshop/shared/testing/browser";
import { HAPROXY_PATH, haproxyMissingMessage } from "@printshop/shared/testing/haproxy";
import { DEBIAN_JEMALLOC_PATH, jemallocMissingMessage } from "@printshop/shared/allocator";
import { CONTRACT_CHECKS_ENV } from "@printshop/shared/contract-checks";
import { removeOrphanClusters, startThrowawayPostgres } from "@printshop/shared/embedded-postgres";

const SHARED_TMP = "/var/tmp";
/** PostgreSQL binaries copied for the postgres user: one folder per version, kept for reuse. */
const STAGED_BINARIES = /^printshop-postgres-\d+\.\d+[\w.-]*$/;

async function leftovers(): Promise<Set<string>> {
  const names = new Set<string>();
  try {
    for await (const entry of Deno.readDir(SHARED_TMP)) {
      if (entry.name.startsWith("printshop-") && !STAGED_BINARIES.test(entry.name)) {
        names.add(`${SHARED_TMP}/${entry.name}`);
      }
    }
    for await (const entry of Deno.readDir(`${SHARED_TMP}/printshop-data`)) {
      if (entry.isDirectory) names.add(`${SHARED_TMP}/printshop-data/${entry.name}`);
    }
  } catch {
    // nothing there
  }
  names.delete(`${SHARED_TMP}/printshop-data`);
  return names;
}

/** What the tests need from Debian: the binary, its package, and the line that says how. */
const DEBIAN_PACKAGES = [
  { binary: CHROMIUM_PATH, name: "chromium", missing: chromiumMissingMessage },
  { binary: HAPROXY_PATH, name: "haproxy", missing: haproxyMissingMessage },
  { binary: DEBIAN_JEMALLOC_PATH, name: "libjemalloc2", missing: jemallocMissingMessage },
];

/**
 * A fresh machine has none of them, and nothing else installs them (playwright's
 * own download needs hosts this project cannot reach). Failures are printed and the run goes on:
 * the tests that need them then fail with their `missing` line, which is clearer than stopping
 * here.
 */
async function ensureDebianPackages(): Promise<void> {
  const wanted = [];
  for (const pkg of DEBIAN_PACKAGES) {
    try {
      await Deno.stat(pkg.binary);
    } catch {
      wanted.push(pkg);
    }
  }
  if (wanted.length === 0) return;
  if (Deno.uid() !== 0) {
    for (const pkg of wanted) console.error(pkg.missing());
    return;
  }
  const names = wanted.map((pkg) => pkg.name);
  console.error(
    `Not installed: ${names.join(", ")}; installing with ` +
      `"apt-get update && apt-get install -y ${names.join(" ")}"`,
  );
  for (const args of [["update"], ["install", "-y", ...names]]) {
    let output: Deno.CommandOutput;
    try {
      output = await new Deno.Command("apt-get", {
        args,
        // Never a prompt: CI has no standard input, and a question would hang the run.
        env: { DEBIAN_FRONTEND: "noninteractive" },
        stdin: "null",
      }).output();
    } catch (error) {
      console.error(`apt-get ${args.join(" ")} could not run: ${error}`);
      return;
    }
    if (!output.success) {
      const decoder = new TextDecoder();
      console.error(decoder.decode(output.stdout) + decoder.decode(output.stderr));
      console.error(
        `apt-get ${args.join(" ")} failed (exit ${output.code}); the tests that need ` +
          `${names.join(", ")} will fail`,
      );
      return;
    }
  }
}

await ensureDebianPackages();
const before = await leftovers();
const runTmp = await Deno.makeTempDir({ prefix: "printshop-test-run-" });
// The postgres user (as root) must be able to pass through to clusters made inside it.
await Deno.chmod(runTmp, 0o711);
const pg = await startThrowawayPostgres("printshop-test-");
let code = 1;
try {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ...Deno.args],
    env: { TEST_DATABASE_URL: pg.url, [CONTRACT_CHECKS_ENV]: "true", TMPDIR: runTmp },
    stdin: "null",
  }).spawn();
  const stopChild = (): void => child.kill("SIGTERM");
  Deno.addSignalListener("SIGINT", stopChild);
  Deno.addSignalListener("SIGTERM", stopChild);
  code = (await child.status).code;
} finally {
  await pg.stop();
  await Deno.remove(runTmp, { recursive: true }).catch(() => {});
  await removeOrphanClusters();
}
const left = [...await leftovers()].filter((name) => !before.has(name));
if (left.length > 0) {
  console.error(`The test run left these behind:\n${left.join("\n")}`);
  if (code === 0) code = 1;
}
Deno.exit(code);
