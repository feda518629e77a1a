import { parseInjectedContext } from './http-metrics.middleware';

describe('parseInjectedContext', () => {
  it('reads the counts the proxy announces in x-service-context', () => {
    expect(parseInjectedContext('traits=2; memories=5')).toEqual({ traits: 2, memories: 5 });
    expect(parseInjectedContext(' traits=0;memories=0 ')).toEqual({ traits: 0, memories: 0 });
  });

  it.each([undefined, 7, ['traits=1; memories=1'], 'traits=x; memories=1', 'memories=1; traits=1', ''])(
    'ignores %p',
    (header) => {
      expect(parseInjectedContext(header)).toBeNull();
    },
  );
});
