package detmath

import "golang.org/x/sys/cpu"

// mathExp is set where math.Exp takes its FMA path, whose values exp's
// are (TestSameAsMath): calling it keeps amd64's speed.
var mathExp = cpu.X86.HasAVX && cpu.X86.HasFMA

// mathLog: amd64's math.Log is log for every normal x (TestSameAsMath).
const mathLog = true
