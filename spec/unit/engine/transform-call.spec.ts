import { expect } from 'chai';
import type { TransformInput } from '../../../src/transform-types.js';
import { HookError } from '../../../src/errors.js';
import { callTransform, stepFailed } from '../../../src/engine/transform-call.js';

const input: TransformInput = { payload: { secret: 'hunter2' }, headers: {}, query: {}, path: 'x', url: '/hooks/x', now: '2024-01-01T00:00:00.000Z' };

async function failure(promise: Promise<unknown>): Promise<HookError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(HookError);
  return err as HookError;
}

describe('engine/transform-call', () => {
  it('passes the input and returns an override, null or undefined, sync or async', async () => {
    expect(await callTransform((i) => ({ message: i.path }), input, 'm')).to.deep.equal({ message: 'x' });
    expect(await callTransform(async () => ({ text: 't' }), input, 'm')).to.deep.equal({ text: 't' });
    expect(await callTransform(() => null, input, 'm')).to.equal(null);
    expect(await callTransform(async () => undefined, input, 'm')).to.equal(undefined);
  });

  it('turns a throw into transform_failed without payload text, keeping the cause', async () => {
    const err = await failure(
      callTransform((i) => {
        throw new Error(`bad ${String(i.payload.secret)}`);
      }, input, 'gh'),
    );
    expect(err.code).to.equal('transform_failed');
    expect(err.status).to.equal(500);
    expect(err.message).to.equal('mapping "gh": transform failed');
    expect(err.message).to.not.include('hunter2');
    expect((err.cause as Error).message).to.equal('bad hunter2');
  });

  it('turns a rejection and a non-object result into transform_failed', async () => {
    expect((await failure(callTransform(() => Promise.reject(new Error('no')), input, 'm'))).code).to.equal('transform_failed');
    for (const value of ['text', 42, true, [{}]]) {
      const err = await failure(callTransform(() => value, input, 'm'));
      expect((err.cause as Error).message).to.match(/expected an object, null or undefined/);
    }
  });

  it('turns a rejection of the pool (time-out, crashed worker) into transform_failed keeping its cause', async () => {
    const err = await failure(callTransform(() => Promise.reject(new Error('transform timed out after 30 ms')), input, 'slow'));
    expect(err.message).to.equal('mapping "slow": transform failed');
    expect((err.cause as Error).message).to.match(/timed out after 30 ms/);
  });

  it('stepFailed names the mapping and step only', () => {
    const err = stepFailed('m1', 'messageTemplate', new Error('detail'));
    expect(err.message).to.equal('mapping "m1": messageTemplate failed');
    expect(err.code).to.equal('transform_failed');
  });
});
