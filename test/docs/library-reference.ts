// docs/library-api.md's reference of cachebreak/detector and cachebreak/client,
// read from the sources with the TypeScript compiler API (the checker of
// tsconfig.lib.json, the project that builds the packages' declarations):
// every export, its signature or fields, and its doc comment.
import { fileURLToPath } from 'node:url';
import { SyntaxKind } from 'typescript/unstable/ast';
import { API, SignatureKind, SymbolFlags, type Checker, type Symbol as TsSymbol } from 'typescript/unstable/sync';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Each package export and its entry file. */
export const LIBRARY_ENTRIES = { 'cachebreak/detector': 'src/detector/index.ts', 'cachebreak/client': 'src/client/index.ts' } as const;

/** A doc comment as Markdown on one paragraph (source line breaks are wrapping). */
const paragraph = (doc: string) => doc.replace(/\s*\n\s*/g, ' ').trim();
const cell = (text: string) => text.replaceAll('|', '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: string) => `\`${cell(text)}\``;

/** A function type's text as a declaration: its top-level ` => ` becomes `: `. */
function asDeclaration(type: string): string {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (type.startsWith(' => ', i) && depth === 0) return type.slice(0, i) + ': ' + type.slice(i + 4);
    if (type.startsWith('=>', i)) i++;
    else if ('([{<'.includes(c)) depth++;
    else if (')]}>'.includes(c)) depth--;
  }
  return type;
}

/** A declaration's own source text, without `export`. */
function sourceOf(symbol: TsSymbol): string {
  const node = symbol.declarations[0]?.resolve() as { getText(): string } | undefined;
  return (node?.getText() ?? '').replace(/^export\s+/, '');
}

function kindOf(symbol: TsSymbol): string {
  const f = symbol.flags;
  if (f & SymbolFlags.Class) return 'class';
  if (f & SymbolFlags.Function) return 'function';
  if (f & SymbolFlags.Interface) return 'interface';
  if (f & SymbolFlags.TypeAlias) return 'type';
  return 'const';
}

const HIDDEN = new Set<number>([SyntaxKind.PrivateKeyword, SyntaxKind.ProtectedKeyword]);

/** Private and protected members are not part of the API; nor are an Error's own fields. */
function isPublic(member: TsSymbol): boolean {
  const declaration = member.valueDeclaration?.resolve() as { modifiers?: readonly { kind: number }[] } | undefined;
  if (declaration === undefined) return false;
  return !(declaration.modifiers ?? []).some((modifier) => HIDDEN.has(modifier.kind)) && !member.valueDeclaration!.path.includes('node_modules');
}

/** The fields of an interface (or the public members of a class), as a table. */
function membersTable(checker: Checker, symbol: TsSymbol, instance: boolean): string[] {
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  const rows = checker.getPropertiesOfType(type).flatMap((member) => {
    if (!isPublic(member)) return [];
    const memberType = checker.getTypeOfSymbol(member);
    const text = memberType ? checker.typeToString(memberType) : '';
    const optional = member.flags & SymbolFlags.Optional ? '?' : '';
    const signatures = memberType && member.flags & SymbolFlags.Method ? checker.getSignaturesOfType(memberType, SignatureKind.Call) : [];
    const shown = signatures.length > 0 ? `${member.name}${asDeclaration(text)}` : `${member.name}${optional}: ${text}`;
    return [`| ${code(shown)} | ${cell(paragraph(checker.getDocumentationCommentOfSymbol(member)))} |`];
  });
  if (rows.length === 0) return [];
  return [`| ${instance ? 'member' : 'field'} | |`, '| --- | --- |', ...rows];
}

/** The constructor's parameters, from its declaration's text. */
function constructorParams(checker: Checker, symbol: TsSymbol): string {
  const type = checker.getTypeOfSymbol(symbol);
  const construct = type && checker.getSignaturesOfType(type, SignatureKind.Construct)[0];
  if (!construct) return '';
  const declaration = construct.declaration?.resolve() as { getText?: () => string } | undefined;
  const text = declaration?.getText?.() ?? '';
  return /constructor\(([^)]*)\)/.exec(text)?.[1]?.replace(/\b(private|protected|public|readonly)\s+/g, '').replace(/\s+/g, ' ').trim() ?? '';
}

function entry(checker: Checker, exported: TsSymbol): string {
  const symbol = exported.flags & SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const kind = kindOf(symbol);
  const doc = paragraph(checker.getDocumentationCommentOfSymbol(symbol));
  const lines = [`### ${exported.name}`, ''];
  const type = checker.getTypeOfSymbol(symbol);
  if (kind === 'function' && type) {
    lines.push('```ts', `function ${exported.name}${asDeclaration(checker.typeToString(type))}`, '```');
  } else if (kind === 'class' && type) {
    const params = constructorParams(checker, symbol);
    lines.push('```ts', `new ${exported.name}(${params})`, '```');
  } else if (kind === 'type') {
    lines.push('```ts', sourceOf(symbol), '```');
  } else if (kind === 'const' && type) {
    lines.push('```ts', `const ${exported.name}: ${checker.typeToString(type)}`, '```');
  }
  if (doc) lines.push(...(lines.length > 2 ? [''] : []), doc);
  if (kind === 'interface' || kind === 'class') {
    const table = membersTable(checker, symbol, kind === 'class');
    if (table.length > 0) lines.push(...(lines.length > 2 ? [''] : []), ...table);
  }
  return lines.join('\n');
}

/** The reference, one section per package export, entries in the order the entry file exports them. */
export function libraryReference(): string {
  const api = new API({ cwd: ROOT });
  try {
    const snapshot = api.updateSnapshot({ openProjects: [`${ROOT}/tsconfig.lib.json`] });
    const project = snapshot.getProjects()[0]!;
    const checker = project.checker;
    return Object.entries(LIBRARY_ENTRIES)
      .map(([name, path]) => {
        const file = project.program.getSourceFile(`${ROOT}/${path}`);
        const module = file && checker.getSymbolAtLocation(file as never);
        if (!module) throw new Error(`${path}: not in tsconfig.lib.json's program`);
        return [`## ${name}`, '', ...checker.getExportsOfModule(module).map((exported) => entry(checker, exported) + '\n')].join('\n');
      })
      .join('\n')
      .trimEnd();
  } finally {
    api.close();
  }
}
