/* One fetch at a time: a page's refresh that is asked for again while it runs runs once more
 * when it ends, however many times it was asked meanwhile, so no change is missed and no two
 * fetches race to render. */

/**
 * Wraps the async `run` so that one call runs at a time; calls made while it runs fold into one
 * more run after it, unless `isStopped()` says the page is gone.
 */
export function oneAtATime(run, isStopped) {
  let running = false;
  let again = false;
  const call = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await run();
    } finally {
      running = false;
      if (again && !isStopped()) {
        again = false;
        void call();
      }
    }
  };
  return call;
}
