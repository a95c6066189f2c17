// Package await is how agentd's tests wait: for a condition or a value,
// with a deadline that scales with the machine, failing at once when what
// they wait for can no longer happen.
//
// Every deadline a test writes is what an idle machine needs, with room;
// Timeout scales it by Scale: AGENTD_TEST_TIMEOUT_SCALE when set (a CI host
// known to be slow sets 3), else the machine's load per CPU (two CPU-bound
// processes beside the tests on 2 cores make it 2 or more), times 2 under
// the race detector. The scale is read again at every check, so a wait
// that started on a quiet machine stretches when the machine gets busy.
//
//	await.Until(t, "the hook's file", 5*time.Second, func() bool { _, err := os.Stat(p); return err == nil })
//	await.Check(t, "run paused", 10*time.Second, func() (bool, error) {
//		switch st := states.last(run); {
//		case st == agent.StatePaused:
//			return true, nil
//		case st.Finished():
//			return false, fmt.Errorf("the run ended %s", st) // fails now, not in 10 s
//		}
//		return false, nil
//	})
//	st := await.Recv(t, "the run's end", 30*time.Second, done)
//	ctx := await.Context(t, 10*time.Second) // for calls that take a context
//
// A loop of its own (a condition variable) uses a Deadline.
package await
