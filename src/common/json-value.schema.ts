/** OpenAPI schema of a field that holds any JSON value (a trait value). */
export const ANY_JSON_VALUE_SCHEMA = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', items: {} },
    { type: 'object', additionalProperties: true },
  ],
};
