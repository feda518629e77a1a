/**
 * A classical Latent Semantic Analysis model: the benchmark's fake upstream uses it as a stand-in for a real
 * embeddings model, which can be neither downloaded nor reached from the benchmark machine. It is
 * dependency-free and deterministic: the same corpus and seed always give the same vectors.
 *
 * Training builds a sublinear tf-idf document-term matrix A and takes its truncated SVD A ≈ U·Σ·Vᵀ by
 * randomized subspace iteration; a text is embedded by folding its tf-idf vector into the latent space.
 */

export interface LsaModel {
  dimensions: number;
  embed(text: string): number[];
}

export interface LsaOptions {
  /** Length of the embeddings, the number of singular vectors kept (default 128). */
  dimensions?: number;
  /** Seed of the random sketch; the model is a pure function of corpus and seed (default 1). */
  seed?: number;
  /** Subspace iterations that sharpen the sketch towards the top singular vectors (default 3). */
  powerIterations?: number;
}

const DEFAULT_DIMENSIONS = 128;
const DEFAULT_SEED = 1;
const DEFAULT_POWER_ITERATIONS = 3;
/** Extra sketch columns: the top singular vectors converge much faster when the sketch is a bit wider. */
const OVERSAMPLING = 10;
/** A stem seen in a single document carries no co-occurrence information for LSA. */
const MIN_DOCUMENT_FREQUENCY = 2;
const MAX_VOCABULARY = 20_000;
const MIN_STEM_LENGTH = 3;
/** Below this relative size a vector is numerical noise: a rank-deficient direction or an empty projection. */
const RELATIVE_TOLERANCE = 1e-10;
/**
 * B·Bᵀ squares the singular values, so those below √ε·σ₁ ≈ 1e-8·σ₁ are rounding noise that dividing by σ
 * would blow up; this keeps a margin.
 */
const MIN_RELATIVE_SINGULAR_VALUE = 1e-6;
/** Jacobi stops when the off-diagonal part is this small relative to the whole matrix. */
const JACOBI_TOLERANCE = 1e-14;
const MAX_JACOBI_SWEEPS = 60;
/** Gram–Schmidt repeats a projection when the column keeps less than this share of its length. */
const REORTHOGONALISE_BELOW = 0.5;

/** Common English words plus the fragments that splitting contractions on the apostrophe leaves behind. */
const STOP_WORDS = new Set(
  (
    'about above after again against all also am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how if in into is it its itself just me more most my ' +
    'myself no nor not now of off on once only or other our ours out over own same she should so some such ' +
    'than that the their theirs them themselves then there these they this those through to too under until ' +
    'up us very was we were what when where which while who whom why will with would you your yours ' +
    'yourself yourselves ' +
    'aren couldn didn doesn don hadn hasn haven isn ll re shouldn ve wasn weren won wouldn'
  ).split(' '),
);

const NON_WORD = /[^\p{L}\p{N}]+/u;

type Columns = Float64Array[];

interface Vocabulary {
  indexOf: Map<string, number>;
  idf: Float64Array;
}

/** Compressed sparse rows: the corpus has a handful of terms per document, so dense products would waste time. */
interface SparseMatrix {
  rows: number;
  columns: number;
  rowStart: Int32Array;
  columnIndex: Int32Array;
  values: Float64Array;
}

/**
 * Trains on a corpus of one document per string. Keep `dimensions` well below the vocabulary size (e.g. 128
 * for LoCoMo's 1,343 stems): near full rank the fold-in amplifies the weak directions that tell
 * co-occurring words apart, and such words end up dissimilar instead of similar.
 */
export function trainLsa(corpus: string[], options: LsaOptions = {}): LsaModel {
  const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
  const powerIterations = options.powerIterations ?? DEFAULT_POWER_ITERATIONS;
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new RangeError('dimensions must be a positive integer');
  }
  if (!Number.isInteger(powerIterations) || powerIterations < 0) {
    throw new RangeError('powerIterations must be a non-negative integer');
  }
  const documents = corpus.map(tokenize);
  const vocabulary = buildVocabulary(documents);
  const matrix = buildDocumentTermMatrix(documents, vocabulary);
  const foldIn = foldInMatrix(matrix, dimensions, options.seed ?? DEFAULT_SEED, powerIterations);
  return { dimensions, embed: (text) => embed(text, vocabulary, foldIn, dimensions) };
}

/**
 * Folds the text's tf-idf vector q into the latent space, Σ⁻¹·Vᵀ·q, as classical LSA does. Dividing by the
 * singular values gives every latent dimension the same weight; on LoCoMo turns that finds the evidence of
 * a question more often than the plain projection Vᵀ·q (recall@10 28% against 23% at 128 dimensions).
 */
function embed(text: string, vocabulary: Vocabulary, foldIn: Float64Array, dimensions: number): number[] {
  const weights = termWeights(tokenize(text), vocabulary);
  const projection = new Float64Array(dimensions);
  for (const [term, weight] of weights) {
    const offset = term * dimensions;
    for (let d = 0; d < dimensions; d++) projection[d] += weight * foldIn[offset + d];
  }
  const length = norm(projection);
  const inputLength = norm(Float64Array.from(weights.values()));
  if (!(length > RELATIVE_TOLERANCE * inputLength)) return fallbackVector(dimensions);
  return Array.from(projection, (value) => value / length);
}

/** Texts without a known word still need a valid unit vector; a fixed one keeps the model deterministic. */
function fallbackVector(dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  vector[dimensions - 1] = 1;
  return vector;
}

// ---------------------------------------------------------------------------------------------------------
// Text

function tokenize(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(NON_WORD)
    .filter((token) => token.length >= 2 && !STOP_WORDS.has(token))
    .map(stem);
}

/**
 * A light stemmer after Porter's first step: plural, then -ing/-ed or -ly, then a final y and e, so that
 * paint/paints/painted/painting, hike/hiking, puppy/puppies and excite/excited each share a stem. The
 * final "e" goes only where Porter's measure says it is not part of a short root, so hope/hop, care/car and
 * plane/plan stay apart. It still over- and under-stems at times, which is fine for a benchmark stand-in.
 */
function stem(word: string): string {
  const singular = stripPlural(word);
  const base = stripVerbEnding(singular) ?? stripAdverbEnding(singular);
  return dropFinalE(finalYToI(base));
}

/** puppies -> puppi (matching puppy -> puppi), paints -> paint; -ss, -us and -is are not plurals. */
function stripPlural(word: string): string {
  if (word.endsWith('ies') && word.length - 2 >= MIN_STEM_LENGTH) return word.slice(0, -2);
  if (/[^sui]s$/.test(word) && word.length - 1 >= MIN_STEM_LENGTH) return word.slice(0, -1);
  return word;
}

/** painting -> paint, running -> run, hoping -> hope; -eed words (need, speed) are left alone. */
function stripVerbEnding(word: string): string | undefined {
  const stemmed = word.endsWith('ing') ? word.slice(0, -3) : /[^e]ed$/.test(word) ? word.slice(0, -2) : word;
  if (stemmed === word || stemmed.length < MIN_STEM_LENGTH || !/[aeiouy]/.test(stemmed)) return undefined;
  const last = stemmed[stemmed.length - 1];
  const doubled = last === stemmed[stemmed.length - 2] && !/[aeioulsz]/.test(last);
  if (doubled && stemmed.length > MIN_STEM_LENGTH) return stemmed.slice(0, -1);
  return measure(stemmed) === 1 && endsShortSyllable(stemmed) ? `${stemmed}e` : stemmed;
}

/** really -> real; short and -ily words (early, reply, family) are rarely adverbs of another stem. */
function stripAdverbEnding(word: string): string {
  return /[^i]ly$/.test(word) && word.length - 2 > MIN_STEM_LENGTH ? word.slice(0, -2) : word;
}

/** cry/cried/cries -> cri, like Porter, so that a y and an ie form meet. */
function finalYToI(word: string): string {
  return /[^aeiouy]y$/.test(word) && word.length >= MIN_STEM_LENGTH ? `${word.slice(0, -1)}i` : word;
}

/** excite -> excit (matching excited), horse -> hors (matching horses), but hope, care and free keep it. */
function dropFinalE(word: string): string {
  const root = word.slice(0, -1);
  if (!word.endsWith('e') || root.length < MIN_STEM_LENGTH) return word;
  const size = measure(root);
  return size > 1 || (size === 1 && !endsShortSyllable(root)) ? root : word;
}

/** Porter's measure: the number of vowel-consonant sequences, e.g. tree 0, hop 1, excit 2. */
function measure(word: string): number {
  return consonantPattern(word).match(/vc/g)?.length ?? 0;
}

/** A short syllable consonant-vowel-consonant (hop, car), its last letter not w, x or y. */
function endsShortSyllable(word: string): boolean {
  return consonantPattern(word).endsWith('cvc') && !/[wxy]$/.test(word);
}

/** One letter per letter: v for a vowel, c for a consonant; y is a vowel after a consonant. */
function consonantPattern(word: string): string {
  let pattern = '';
  for (const letter of word) {
    const vowel = /[aeiou]/.test(letter) || (letter === 'y' && pattern.endsWith('c'));
    pattern += vowel ? 'v' : 'c';
  }
  return pattern;
}

// ---------------------------------------------------------------------------------------------------------
// Document-term matrix

/** Keeps the stems found in at least two documents, the most widespread first, with idf = ln(N / df). */
function buildVocabulary(documents: string[][]): Vocabulary {
  const documentFrequency = new Map<string, number>();
  for (const stems of documents) {
    for (const stem of new Set(stems)) documentFrequency.set(stem, (documentFrequency.get(stem) ?? 0) + 1);
  }
  const kept = [...documentFrequency]
    .filter(([, frequency]) => frequency >= MIN_DOCUMENT_FREQUENCY)
    .sort(([stemA, a], [stemB, b]) => b - a || (stemA < stemB ? -1 : stemA > stemB ? 1 : 0))
    .slice(0, MAX_VOCABULARY);
  return {
    indexOf: new Map(kept.map(([stem], index) => [stem, index])),
    idf: Float64Array.from(kept, ([, frequency]) => Math.log(documents.length / frequency)),
  };
}

/** Sublinear tf-idf, (1 + ln tf) * idf, keyed by term index; unknown stems are ignored. */
function termWeights(stems: string[], vocabulary: Vocabulary): Map<number, number> {
  const counts = new Map<number, number>();
  for (const stem of stems) {
    const term = vocabulary.indexOf.get(stem);
    if (term !== undefined) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  const weights = new Map<number, number>();
  for (const [term, count] of counts) weights.set(term, (1 + Math.log(count)) * vocabulary.idf[term]);
  return weights;
}

/** Rows are L2-normalised so that long turns do not dominate the singular vectors. */
function buildDocumentTermMatrix(documents: string[][], vocabulary: Vocabulary): SparseMatrix {
  const rowStart = new Int32Array(documents.length + 1);
  const columnIndex: number[] = [];
  const values: number[] = [];
  documents.forEach((stems, row) => {
    const weights = [...termWeights(stems, vocabulary)].sort(([a], [b]) => a - b);
    const length = norm(Float64Array.from(weights, ([, weight]) => weight));
    for (const [term, weight] of weights) {
      if (weight === 0) continue; // a term found in every document has no idf
      columnIndex.push(term);
      values.push(weight / length);
    }
    rowStart[row + 1] = columnIndex.length;
  });
  return {
    rows: documents.length,
    columns: vocabulary.idf.length,
    rowStart,
    columnIndex: Int32Array.from(columnIndex),
    values: Float64Array.from(values),
  };
}

/** A·X for X given as columns of length `matrix.columns`. */
function multiply(matrix: SparseMatrix, columns: Columns): Columns {
  return columns.map((column) => {
    const result = new Float64Array(matrix.rows);
    for (let row = 0; row < matrix.rows; row++) {
      let sum = 0;
      for (let k = matrix.rowStart[row]; k < matrix.rowStart[row + 1]; k++) {
        sum += matrix.values[k] * column[matrix.columnIndex[k]];
      }
      result[row] = sum;
    }
    return result;
  });
}

/** Aᵀ·Y for Y given as columns of length `matrix.rows`. */
function multiplyTransposed(matrix: SparseMatrix, columns: Columns): Columns {
  return columns.map((column) => {
    const result = new Float64Array(matrix.columns);
    for (let row = 0; row < matrix.rows; row++) {
      const factor = column[row];
      if (factor === 0) continue;
      for (let k = matrix.rowStart[row]; k < matrix.rowStart[row + 1]; k++) {
        result[matrix.columnIndex[k]] += factor * matrix.values[k];
      }
    }
    return result;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Truncated SVD

/**
 * V·Σ⁻¹ for the top `rank` singular triplets of the matrix, as a terms × rank row-major array (one row per
 * term, ready for folding in). Randomized subspace iteration (Halko, Martinsson & Tropp) finds an
 * orthonormal basis Q of the dominant column space; B = Qᵀ·A is then small enough that the eigenvectors u of
 * B·Bᵀ, from the Jacobi method, give the rest: Bᵀ·u = σ·v, so v/σ = Bᵀ·u/σ². Directions the matrix does not
 * have (a corpus of rank below `rank`) stay zero.
 */
function foldInMatrix(
  matrix: SparseMatrix,
  rank: number,
  seed: number,
  powerIterations: number,
): Float64Array {
  const sketchWidth = Math.min(rank + OVERSAMPLING, matrix.rows, matrix.columns);
  const random = gaussianSource(seed);
  const sketch = Array.from({ length: sketchWidth }, () =>
    Float64Array.from({ length: matrix.columns }, random),
  );
  let range = orthonormalise(multiply(matrix, sketch));
  for (let iteration = 0; iteration < powerIterations; iteration++) {
    range = orthonormalise(multiply(matrix, orthonormalise(multiplyTransposed(matrix, range))));
  }
  const transposedB = multiplyTransposed(matrix, range);
  const { values, vectors } = symmetricEigen(gramMatrix(transposedB), sketchWidth);

  const foldIn = new Float64Array(matrix.columns * rank);
  const largest = Math.max(values[0] ?? 0, 0);
  for (let component = 0; component < Math.min(rank, sketchWidth); component++) {
    const squaredSingularValue = values[component];
    if (!(squaredSingularValue > MIN_RELATIVE_SINGULAR_VALUE ** 2 * largest)) break;
    const coefficients = Float64Array.from(
      { length: sketchWidth },
      (_, i) => vectors[i * sketchWidth + component] / squaredSingularValue,
    );
    const column = combine(transposedB, coefficients);
    column.forEach((value, term) => (foldIn[term * rank + component] = value));
  }
  return foldIn;
}

/** Σ coefficients[i]·columns[i] */
function combine(columns: Columns, coefficients: Float64Array): Float64Array {
  const result = new Float64Array(columns[0].length);
  columns.forEach((column, i) => addMultiple(result, column, coefficients[i]));
  return result;
}

/**
 * Modified Gram–Schmidt. A column that loses most of its length to the projections has lost accuracy too,
 * so it gets a second pass ("twice is enough", Kahan–Parlett); the others need only one, which halves the
 * cost of training. Columns that turn out to be dependent are zeroed rather than kept as noise.
 */
function orthonormalise(columns: Columns): Columns {
  columns.forEach((column, j) => {
    const originalLength = norm(column);
    let length = originalLength;
    for (let pass = 0; pass < 2 && length > RELATIVE_TOLERANCE * originalLength; pass++) {
      const lengthBefore = length;
      for (let i = 0; i < j; i++) addMultiple(column, columns[i], -dot(columns[i], column));
      length = norm(column);
      if (length > REORTHOGONALISE_BELOW * lengthBefore) break;
    }
    if (length > RELATIVE_TOLERANCE * originalLength) scaleInPlace(column, 1 / length);
    else column.fill(0);
  });
  return columns;
}

/** Row-major G = Cᵀ·C for C given as columns. */
function gramMatrix(columns: Columns): Float64Array {
  const size = columns.length;
  const gram = new Float64Array(size * size);
  for (let i = 0; i < size; i++) {
    for (let j = i; j < size; j++) {
      const value = dot(columns[i], columns[j]);
      gram[i * size + j] = value;
      gram[j * size + i] = value;
    }
  }
  return gram;
}

/**
 * Eigen-decomposition of a small symmetric matrix by the cyclic Jacobi method: exact-enough and simple for
 * a matrix of ~140 rows. Returns the eigenvalues in decreasing order and, row-major, the matching
 * eigenvectors as columns.
 */
function symmetricEigen(input: Float64Array, size: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(input);
  const rotations = identity(size);
  const total = norm(a);
  for (
    let sweep = 0;
    sweep < MAX_JACOBI_SWEEPS && offDiagonalNorm(a, size) > JACOBI_TOLERANCE * total;
    sweep++
  ) {
    for (let p = 0; p < size - 1; p++) {
      for (let q = p + 1; q < size; q++) rotate(a, rotations, size, p, q);
    }
  }
  const order = Array.from({ length: size }, (_, i) => i).sort(
    (i, j) => a[j * size + j] - a[i * size + i] || i - j,
  );
  const values = Float64Array.from(order, (i) => a[i * size + i]);
  const vectors = new Float64Array(size * size);
  for (let row = 0; row < size; row++) {
    order.forEach((source, column) => (vectors[row * size + column] = rotations[row * size + source]));
  }
  return { values, vectors };
}

/**
 * One Jacobi rotation A ← Jᵀ·A·J that zeroes a[p][q], accumulated into the eigenvector matrix. The angle
 * is chosen with |θ| ≤ π/4, which keeps the update numerically stable.
 */
function rotate(a: Float64Array, rotations: Float64Array, size: number, p: number, q: number): void {
  const apq = a[p * size + q];
  if (apq === 0) return;
  const theta = (a[q * size + q] - a[p * size + p]) / (2 * apq);
  const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
  const c = 1 / Math.sqrt(t * t + 1);
  const s = t * c;
  for (let k = 0; k < size; k++) {
    const akp = a[k * size + p];
    const akq = a[k * size + q];
    a[k * size + p] = c * akp - s * akq;
    a[k * size + q] = s * akp + c * akq;
    const vkp = rotations[k * size + p];
    const vkq = rotations[k * size + q];
    rotations[k * size + p] = c * vkp - s * vkq;
    rotations[k * size + q] = s * vkp + c * vkq;
  }
  for (let k = 0; k < size; k++) {
    const apk = a[p * size + k];
    const aqk = a[q * size + k];
    a[p * size + k] = c * apk - s * aqk;
    a[q * size + k] = s * apk + c * aqk;
  }
}

function offDiagonalNorm(a: Float64Array, size: number): number {
  let sum = 0;
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) if (i !== j) sum += a[i * size + j] ** 2;
  }
  return Math.sqrt(sum);
}

function identity(size: number): Float64Array {
  const matrix = new Float64Array(size * size);
  for (let i = 0; i < size; i++) matrix[i * size + i] = 1;
  return matrix;
}

// ---------------------------------------------------------------------------------------------------------
// Vectors and random numbers

function dot(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

function norm(vector: Float64Array): number {
  return Math.sqrt(dot(vector, vector));
}

/** target ← target + factor·source */
function addMultiple(target: Float64Array, source: Float64Array, factor: number): void {
  if (factor === 0) return;
  for (let i = 0; i < target.length; i++) target[i] += factor * source[i];
}

function scaleInPlace(vector: Float64Array, factor: number): void {
  for (let i = 0; i < vector.length; i++) vector[i] *= factor;
}

/** Standard normal samples (Box–Muller) from a seeded mulberry32 generator, so training is reproducible. */
function gaussianSource(seed: number): () => number {
  const uniform = mulberry32(seed);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
