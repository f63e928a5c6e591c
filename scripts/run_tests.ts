/**
 * `deno task test`: one throwaway PostgreSQL cluster for the whole run (each test makes its own
 * database on it), then every test file, then the cluster is stopped. Contract checks are on for
 * every test and every process a test starts. Extra arguments go to `deno test` (e.g. a file or
 * `--filter`).
 */
import { CONTRACT_CHECKS_ENV } from "@printshop/shared/contract-checks";
import { startEmbeddedPostgres } from "@printshop/shared/embedded-postgres";

const dir = await Deno.makeTempDir({ prefix: "printshop-test-" });
const pg = await startEmbeddedPostgres({
  dataDir: `${dir}/pgdata`,
  password: crypto.randomUUID(),
  ephemeral: true,
});
let code = 1;
try {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--parallel", ...Deno.args],
    env: { TEST_DATABASE_URL: pg.url, [CONTRACT_CHECKS_ENV]: "true" },
    stdin: "null",
  }).spawn();
  const stopChild = (): void => child.kill("SIGTERM");
  Deno.addSignalListener("SIGINT", stopChild);
  Deno.addSignalListener("SIGTERM", stopChild);
  code = (await child.status).code;
} finally {
  await pg.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
Deno.exit(code);
