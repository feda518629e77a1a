/** One call to an upstream as the metrics see it; the upstream client reports each to its observer. */
export interface UpstreamObservation {
  status: number | null;
  failure: 'timeout' | 'unavailable' | 'aborted' | null;
  /** From sending to the response headers (or to the failure). */
  seconds: number;
}

export type UpstreamObserver = (observation: UpstreamObservation) => void;
