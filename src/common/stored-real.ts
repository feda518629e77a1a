/** The smallest positive normal value of PostgreSQL's `real` (float4). */
const FLOAT4_MIN_NORMAL = 1.1754943508222875e-38;

/**
 * A number from 0 to 1 as a `real` column can hold it: a positive value too small for float4 (such as
 * 1e-300, which PostgreSQL refuses as an underflow) is stored as 0, which is what it rounds to.
 */
export function storableUnitInterval(value: number): number {
  return value > 0 && value < FLOAT4_MIN_NORMAL ? 0 : value;
}
