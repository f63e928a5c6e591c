/**
 * `deno task sql`: SQL on the embedded cluster of the stack `task start` runs on DATA_DIR, for an
 * operator looking inside. As the tables' owner (`printshop_owner`, which bypasses row-level
 * security: every organisation's rows, and writes are real), or with `--role app` as the
 * services see the database (no organisation set: no tenant row at all).
 *
 *   deno task sql -c "SELECT count(*) FROM quotes.quotes"   # rows as JSON, no psql needed
 *   deno task sql                                           # psql, when it is installed
 *
 * The password is the one `task start` keeps in DATA_DIR/secrets.json; the port is in the stack's
 * record there. A stack on an external DATABASE_URL has no embedded cluster: use that server's own
 * tools.
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { ROLES } from "@printshop/shared/db/tenancy";
import { runningStack } from "./start_guard.ts";

const USAGE = `Usage: deno task sql [-c <statement>] [--role owner|app]

  -c, --command <sql>  run one statement and print its rows as JSON (no psql needed)
  --role owner|app     the tables' owner (every organisation's rows; the default) or the
                       services' role (row-level security applies: no organisation, no rows)
  (no -c)              open psql on the cluster, when psql is installed

Environment:
  DATA_DIR             where \`task start\` keeps its data and secrets [./.data]
`;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    command: { type: "string", short: "c" },
    role: { type: "string", default: "owner" },
    help: { type: "boolean", short: "h" },
  },
});

function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

if (values.help) {
  console.log(USAGE);
  Deno.exit(0);
}
if (values.role !== "owner" && values.role !== "app") fail(`--role is owner or app\n\n${USAGE}`);
const user = values.role === "owner" ? ROLES.owner : ROLES.app;

const dataDir = resolve(Deno.env.get("DATA_DIR") || "./.data");
const stack = await runningStack(dataDir);
if (stack === null) fail(`No stack runs on ${dataDir}; start it with \`deno task start\``);
if (stack.postgresPort === undefined) {
  fail("The stack on this data directory runs on an external DATABASE_URL: use its own tools");
}
let password: string;
try {
  password = (JSON.parse(await Deno.readTextFile(join(dataDir, "secrets.json"))) as {
    postgresPassword: string;
  }).postgresPassword;
} catch {
  fail(`Cannot read ${join(dataDir, "secrets.json")}`);
}

if (values.command === undefined) {
  // psql from the machine: interactive, with the password in its environment, not on its line.
  try {
    const psql = new Deno.Command("psql", {
      args: ["-h", "127.0.0.1", "-p", String(stack.postgresPort), "-U", user, "printshop"],
      env: { PGPASSWORD: password },
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    Deno.exit((await psql.status).code);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    fail(`psql is not installed; give a statement with -c instead\n\n${USAGE}`);
  }
}

const sql = postgres({
  host: "127.0.0.1",
  port: stack.postgresPort,
  database: "printshop",
  username: user,
  password,
  max: 1,
  onnotice: () => {},
});
try {
  const rows = await sql.unsafe(values.command);
  console.log(JSON.stringify(rows, null, 2));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  Deno.exit(1);
} finally {
  await sql.end({ timeout: 1 });
}
