// The keys of an event that its schema does not declare. The contract ignores
// them (a client may send more than cachebreak reads), but they are named back
// to the sender: "modle" or "sesionId" is a typo, and silently dropping it
// would hide why a field seems missing.
import type { z } from 'zod';

/** Keys listed for one event; the rest are counted. */
const LISTED = 10;

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; element?: z.ZodType };

function defOf(schema: z.ZodType): Def {
  let def = (schema as unknown as { _zod: { def: Def } })._zod.def;
  while ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType) {
    def = (def.innerType as unknown as { _zod: { def: Def } })._zod.def;
  }
  return def;
}

function walk(schema: z.ZodType, value: unknown, path: string, out: string[]): void {
  if (out.length > LISTED || typeof value !== 'object' || value === null) return;
  const def = defOf(schema);
  if (def.type === 'object' && def.shape && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) {
      const declared = def.shape[key];
      if (declared === undefined) out.push(path ? `${path}.${key}` : key);
      else walk(declared, inner, path ? `${path}.${key}` : key, out);
    }
  } else if (def.type === 'array' && def.element && Array.isArray(value) && defOf(def.element).type === 'object') {
    value.forEach((item, i) => walk(def.element!, item, `${path}[${i}]`, out));
  }
}

/** The undeclared keys of `value` (an event its schema accepted), by path ("modle", "tools[0].descripton"), at most LISTED. */
export function unknownKeys(schema: z.ZodType, value: unknown): string[] {
  const out: string[] = [];
  walk(schema, value, '', out);
  return out.slice(0, LISTED);
}
