package scheduler

import (
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/queue"
)

func assigned(pod *corev1.Pod) bool { return pod.GetSpec().GetNodeName() != "" }

// responsibleFor reports whether a profile here serves the pod's schedulerName.
func (s *Scheduler) responsibleFor(pod *corev1.Pod) bool {
	_, ok := s.Profiles[queue.ProfileOf(pod)]
	return ok
}

func (s *Scheduler) addEventHandlers() {
	_, _ = s.podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj object.Object) { s.onPodAdd(obj.(*corev1.Pod)) },
		UpdateFunc: func(o, n object.Object) { s.onPodUpdate(o.(*corev1.Pod), n.(*corev1.Pod)) },
		DeleteFunc: func(obj object.Object) {
			if pod, ok := cache.As[*corev1.Pod](obj); ok {
				s.onPodDelete(pod)
			}
		},
	})
	_, _ = s.nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj object.Object) { s.OnNodeAdd(obj.(*corev1.Node)) },
		UpdateFunc: func(o, n object.Object) { s.OnNodeUpdate(o.(*corev1.Node), n.(*corev1.Node)) },
		DeleteFunc: func(obj object.Object) {
			if node, ok := cache.As[*corev1.Node](obj); ok {
				s.Cache.RemoveNode(node)
			}
		},
	})
}

func (s *Scheduler) onPodAdd(pod *corev1.Pod) {
	if assigned(pod) {
		s.Cache.AddPod(pod)
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodAdd, nil, pod, nil)
		return
	}
	if s.responsibleFor(pod) {
		s.Queue.Add(pod)
	}
}

func (s *Scheduler) onPodUpdate(oldPod, newPod *corev1.Pod) {
	switch {
	case assigned(newPod) && !assigned(oldPod):
		// Bound: it leaves the queue and joins (or confirms) its node.
		s.Queue.Delete(newPod)
		s.Cache.AddPod(newPod)
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodAdd, nil, newPod, nil)
	case assigned(newPod):
		s.Cache.UpdatePod(oldPod, newPod)
		if ev := framework.AssignedPodUpdateEvent(oldPod, newPod); ev.ActionType != 0 {
			s.Queue.MoveAllToActiveOrBackoffQueue(ev, oldPod, newPod, nil)
		}
	case s.responsibleFor(newPod):
		if s.Cache.IsAssumedPod(newPod) {
			return // its binding is in flight
		}
		s.Queue.Update(oldPod, newPod)
	}
}

func (s *Scheduler) onPodDelete(pod *corev1.Pod) {
	if assigned(pod) {
		s.Cache.RemovePod(pod)
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, pod, nil, nil)
		return
	}
	s.Queue.Delete(pod)
	if fw, ok := s.Profiles[queue.ProfileOf(pod)]; ok {
		fw.RejectWaitingPod(pod.GetMetadata().GetUid())
	}
}

// OnNodeAdd adds a node and retries the pods it may help.
func (s *Scheduler) OnNodeAdd(node *corev1.Node) {
	s.Cache.AddNode(node)
	s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, node, nil)
}

// OnNodeUpdate updates a node and retries the pods the change may help.
func (s *Scheduler) OnNodeUpdate(oldNode, newNode *corev1.Node) {
	s.Cache.UpdateNode(oldNode, newNode)
	if ev := framework.NodeUpdateEvent(oldNode, newNode); ev.ActionType != 0 {
		s.Queue.MoveAllToActiveOrBackoffQueue(ev, oldNode, newNode, nil)
	}
}
