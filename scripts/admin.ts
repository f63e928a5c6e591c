/**
 * `deno task admin <command>`: the platform admin API from a terminal. Prints the response's
 * `data` as JSON; on an error prints the error envelope to stderr and exits 1.
 *
 * The admin URL comes from ADMIN_URL, else ADMIN_PORT, else the stack `task start` runs on
 * DATA_DIR (it records where its admin API is), else http://127.0.0.1:8081. The token comes from
 * PLATFORM_ADMIN_TOKEN or the one `task start` generated into DATA_DIR.
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { runningStack } from "./start_guard.ts";

const wrap = (words: readonly string[], indent: string, width = 96): string => {
  const lines: string[] = [];
  let line = indent;
  for (const word of words) {
    if (line.length + word.length + 1 > width && line.trim() !== "") {
      lines.push(line.trimEnd());
      line = indent;
    }
    line += `${word}, `;
  }
  lines.push(line.replace(/, $/, ""));
  return lines.join("\n");
};

const USAGE = `Usage: deno task admin <command> [options]

Commands:
  create-org --name <name>
  list-orgs
  show-org --org <orgId>
  create-key --org <orgId> (--scopes <a,b,…> | --all-scopes) [--name <name>]
  list-keys --org <orgId>
  revoke-key --key <keyId>            (or: revoke-key <keyId>)
  set-limits --org <orgId> --rpm <requests per minute | default>
  create-partner-app --name <name> (--scopes <a,b,…> | --all-scopes)
  grant --app <appId> --org <orgId> (--scopes <a,b,…> | --all-scopes)
  list-mail                           the proofs mail outbox, newest first (every organisation)

Scopes:
${wrap(ALL_SCOPES, "  ")}

Environment:
  ADMIN_URL             the admin API, e.g. http://10.0.0.5:8081
  ADMIN_PORT            or just its port on 127.0.0.1
                        (neither set: the stack \`task start\` runs on DATA_DIR, else 8081)
  DATA_DIR              where \`task start\` keeps its data and secrets [./.data]
  PLATFORM_ADMIN_TOKEN  the admin token (unset: the one \`task start\` generated in DATA_DIR)
`;

/** The command line, or the usage (exit 2) for an unknown option or one without its value. */
function parsedArgs() {
  try {
    return parseArgs({
      args: Deno.args,
      allowPositionals: true,
      options: OPTIONS,
    });
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
  }
}

const OPTIONS = {
  name: { type: "string" },
  org: { type: "string" },
  key: { type: "string" },
  scopes: { type: "string" },
  "all-scopes": { type: "boolean" },
  rpm: { type: "string" },
  app: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const { values, positionals } = parsedArgs();

function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

function need(value: string | undefined, flag: string): string {
  if (!value) fail(`Missing --${flag}\n\n${USAGE}`);
  return value;
}

const dataDir = resolve(Deno.env.get("DATA_DIR") || "./.data");

async function adminToken(): Promise<string> {
  const fromEnv = Deno.env.get("PLATFORM_ADMIN_TOKEN");
  if (fromEnv) return fromEnv;
  const file = join(dataDir, "secrets.json");
  try {
    return (JSON.parse(await Deno.readTextFile(file)) as { adminToken: string }).adminToken;
  } catch {
    fail(`No PLATFORM_ADMIN_TOKEN set and no ${file}; start the platform first`);
  }
}

function scopesArg(): string[] {
  if (values["all-scopes"]) return [...ALL_SCOPES];
  return need(values.scopes, "scopes").split(",").map((s) => s.trim()).filter(Boolean);
}

const [command, ...rest] = positionals;
// Asked for, the usage is an answer (exit 0); a missing command is a mistake (2, on stderr).
if (values.help) {
  console.log(USAGE);
  Deno.exit(0);
}
if (!command) fail(USAGE);
// Only revoke-key takes an argument of its own; anything more is a mistake, not ignored.
const extra = rest.slice(command === "revoke-key" ? 1 : 0);
if (extra.length > 0) fail(`Unexpected argument "${extra[0]}"\n\n${USAGE}`);

let request: { method: string; path: string; body?: unknown };
switch (command) {
  case "create-org":
    request = {
      method: "POST",
      path: "/admin/organizations",
      body: { name: need(values.name, "name") },
    };
    break;
  case "list-orgs":
    request = { method: "GET", path: "/admin/organizations" };
    break;
  case "show-org":
    request = { method: "GET", path: `/admin/organizations/${need(values.org, "org")}` };
    break;
  case "list-mail":
    request = { method: "GET", path: "/admin/mail" };
    break;
  case "create-key": {
    const scopes = scopesArg();
    request = {
      method: "POST",
      path: `/admin/organizations/${need(values.org, "org")}/api-keys`,
      body: values.name ? { name: values.name, scopes } : { scopes },
    };
    break;
  }
  case "list-keys":
    request = { method: "GET", path: `/admin/organizations/${need(values.org, "org")}/api-keys` };
    break;
  case "revoke-key":
    request = { method: "DELETE", path: `/admin/api-keys/${need(values.key ?? rest[0], "key")}` };
    break;
  case "set-limits": {
    const rpm = need(values.rpm, "rpm");
    request = {
      method: "PUT",
      path: `/admin/organizations/${need(values.org, "org")}/limits`,
      body: { requestsPerMinute: rpm === "default" ? null : Number(rpm) },
    };
    break;
  }
  case "create-partner-app":
    request = {
      method: "POST",
      path: "/admin/partner-apps",
      body: { name: need(values.name, "name"), scopes: scopesArg() },
    };
    break;
  case "grant":
    request = {
      method: "POST",
      path: `/admin/partner-apps/${need(values.app, "app")}/grants`,
      body: { organizationId: need(values.org, "org"), scopes: scopesArg() },
    };
    break;
  default:
    fail(`Unknown command "${command}"\n\n${USAGE}`);
}

async function adminUrl(): Promise<string> {
  const url = Deno.env.get("ADMIN_URL");
  if (url) return url.replace(/\/+$/, "");
  const port = Deno.env.get("ADMIN_PORT");
  if (port) return `http://127.0.0.1:${port}`;
  return (await runningStack(dataDir))?.adminUrl ?? "http://127.0.0.1:8081";
}

const base = await adminUrl();
let res: Response;
try {
  res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${await adminToken()}`,
      "content-type": "application/json",
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
} catch {
  fail(
    `Cannot reach the admin API at ${base}; is the platform running? ` +
      "(set ADMIN_URL or ADMIN_PORT if it listens elsewhere)",
  );
}
const json = await res.json() as { data?: unknown };
if (!res.ok) {
  console.error(JSON.stringify(json, null, 2));
  Deno.exit(1);
}
console.log(JSON.stringify(json.data, null, 2));
