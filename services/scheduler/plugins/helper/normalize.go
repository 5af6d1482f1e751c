package helper

import "podline.dev/services/scheduler/internal/framework"

// DefaultNormalizeScore scales scores to [0, maxPriority] by the highest
// score; with reverse, high raw scores become low ones. All zero scores
// become maxPriority when reversed and stay 0 otherwise.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores framework.NodeScoreList) *framework.Status {
	var maxCount int64
	for _, s := range scores {
		maxCount = max(maxCount, s.Score)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		s := scores[i].Score
		s = maxPriority * s / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
	return nil
}
