type JsonSchema = Record<string, any>;

const STRING_FORMATS: Record<string, string> = {
  uuid: '3f2b8c1e-5d4a-4e6f-9a7b-0c1d2e3f4a5b',
  'date-time': '2026-01-01T12:00:00.000Z',
  date: '2026-01-01',
  email: 'buyer@example.com',
  uri: 'https://example.com/',
};

/** A string its schema takes: a format's sample, else a word of an allowed length (digits for a digit pattern). */
function stringExample(schema: JsonSchema): string {
  if (schema.format && STRING_FORMATS[schema.format]) return STRING_FORMATS[schema.format];
  if (schema.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return STRING_FORMATS.date;
  const length = Math.max(schema.minLength ?? 1, Math.min(schema.maxLength ?? 7, 7));
  if (typeof schema.pattern === 'string' && /\\d|\[0-9\]/.test(schema.pattern)) return '1'.repeat(length);
  return 'example'.padEnd(length, 'x').slice(0, length);
}

function numberExample(schema: JsonSchema): number {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
  return schema.maximum !== undefined ? Math.min(Math.max(low, 1), schema.maximum) : Math.max(low, 1);
}

/**
 * An example value that its JSON Schema (as joi-to-json writes it) accepts: the first of an enum or a choice,
 * a sample for each format, one element per array, every property of an object. The docs test checks each
 * example against its schema. `requiredOnly`: the smallest such value (a request's example).
 */
export function exampleOf(schema: JsonSchema | undefined, depth = 0, requiredOnly = false): unknown {
  if (!schema || depth > 8) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.find(v => v !== null) ?? null;
  const choice = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choice) && choice.length > 0)
    return exampleOf(choice.find((c: JsonSchema) => c.type !== 'null') ?? choice[0], depth + 1, requiredOnly);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringExample(schema);
    case 'integer':
      return Math.trunc(numberExample(schema));
    case 'number':
      return numberExample(schema);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.maxItems === 0 ? 0 : Math.max(1, schema.minItems ?? 1) }, () =>
        exampleOf(schema.items, depth + 1, requiredOnly),
      );
    case 'object':
    case undefined: {
      if (!schema.properties) return type === 'object' ? {} : null;
      return Object.fromEntries(
        Object.entries<JsonSchema>(schema.properties).map(([name, property]) => [
          name,
          exampleOf(property, depth + 1),
        ]),
      );
    }
    default:
      return null;
  }
}
