/**
 * `deno task client:build`: compiles `src/` to JavaScript and declarations in `dist/` for Node,
 * which does not strip types from files under node_modules. It uses TypeScript's own compiler
 * (`npm:typescript`, through its API so no second config file can drift from this one) and
 * rewrites the `.ts` import suffixes Deno needs to the `.js` of the output. `client/package.json`
 * points at `dist/`; `npm pack` then packs it (node_package_test.ts does both).
 */
import ts from "typescript";

const CLIENT_DIR = new URL("./", import.meta.url);

/** The compiler options of the Node build. */
export const BUILD_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  // Only the web platform's globals: the package runs in Node 20+, Deno, Bun and browsers.
  types: [],
  strict: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  declaration: true,
  sourceMap: false,
  rewriteRelativeImportExtensions: true,
  // standardwebhooks' declarations name Node's Buffer, which `types: []` leaves out on purpose.
  skipLibCheck: true,
  newLine: ts.NewLineKind.LineFeed,
};

/** Compiles `src/mod.ts` and what it imports into `outDir`; throws with every diagnostic. */
export async function buildNodePackage(
  outDir: string = new URL("dist", CLIENT_DIR).pathname,
): Promise<void> {
  // A fresh folder, so a module deleted from src/ leaves no stale copy in the package.
  await Deno.remove(outDir, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  const rootDir = new URL("src", CLIENT_DIR).pathname;
  const program = ts.createProgram({
    rootNames: [new URL("src/mod.ts", CLIENT_DIR).pathname],
    options: { ...BUILD_OPTIONS, rootDir, outDir },
  });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (diagnostics.length > 0 || emitted.emitSkipped) {
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => Deno.cwd(),
      getNewLine: () => "\n",
    });
    throw new Error(`The Node build of the client failed:\n${text}`);
  }
}

if (import.meta.main) {
  await buildNodePackage();
  console.log("built client/dist");
}
