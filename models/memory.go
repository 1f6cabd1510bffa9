package models

// Memory estimates size a model before it is built, so that a run that
// cannot fit is refused before it allocates. They are lower bounds: the
// parameters, their gradients, optStates more copies for the optimizer
// (momentum: 1, Adam: 2) and the activations one batch's forward pass
// keeps for the backward pass, in float32, counted in float64 so that no
// size overflows. A configuration over the machine's memory by this count
// cannot fit; one under it may still not.

// TrainingBytes is the lower bound on the memory training AlexNet-CIFAR on
// batches of batch images takes, with optStates optimizer copies of the
// parameters.
func (c AlexNetConfig) TrainingBytes(batch, optStates int) float64 {
	w := func(n int) float64 { return float64(max(1, n/max(c.WidthDiv, 1))) }
	c1, c2, c3, c4, c5, hidden := w(64), w(192), w(384), w(256), w(256), w(4096)
	k := float64(c.Classes)
	in := float64(max(c.InChannels, 0))
	if in == 0 {
		in = 3 // as NewAlexNet reads InChannels
	}
	params := (in*9+1)*c1 + (c1*25+1)*c2 + (c2*9+1)*c3 + (c3*9+1)*c4 + (c4*9+1)*c5 +
		(c5*36+1)*hidden + (hidden+1)*hidden + (hidden+1)*k
	// Per image: the input; each convolution's output and ReLU at its
	// resolution (32², 16², 8², 8², 8²); the pools; the classifier's.
	act := in*1024 + 2*c1*1024 + c1*256 + 2*c2*256 + c2*64 + 2*(c3+c4+c5)*64 + c5*16 + c5*36 + 4*hidden + k
	return 4 * (params*float64(2+optStates) + float64(batch)*act)
}

// TrainingBytes is the lower bound on the memory training SmallCNN on
// batches of batch images takes, with optStates optimizer copies of the
// parameters.
func (c SmallCNNConfig) TrainingBytes(batch, optStates int) float64 {
	in, w, k := float64(max(c.InChannels, 1)), float64(c.Width), float64(c.Classes)
	if c.InChannels == 0 {
		in = 3
	}
	params := (in*9+1)*w + (w*9+1)*2*w + (2*w*64+1)*8*w + (8*w+1)*k
	// Per image: the input; each convolution's output and ReLU (32², 16²);
	// the pools (16², 8²); the hidden layer and its ReLU; the logits.
	act := in*1024 + 2*w*1024 + w*256 + 2*2*w*256 + 2*w*64 + 2*8*w + k
	return 4 * (params*float64(2+optStates) + float64(batch)*act)
}

// TrainingBytes is the lower bound on the memory training the GPT on
// micro-batches of batch sequences of BlockSize tokens takes, with
// optStates optimizer copies of the parameters.
func (c GPTConfig) TrainingBytes(batch, optStates int) float64 {
	d, t, v := float64(c.NEmbd), float64(c.BlockSize), float64(c.VocabSize)
	params := v*d + t*d + float64(c.NLayer)*(12*d*d+2*d) + d
	// Per token and block: ln_1, q, k, v, the attention output and its
	// projection, ln_2, the MLP's 4d hidden before and after the GELU, and
	// the attention weights (one row of T per head); then the logits.
	perToken := float64(c.NLayer)*(16*d+float64(c.NHead)*t) + d + v
	return 4 * (params*float64(2+optStates) + float64(batch)*t*perToken)
}

// TrainingBytes is the lower bound on the memory training TanhCNN on
// batches of batch images takes, with optStates optimizer copies of the
// parameters.
func (c TanhCNNConfig) TrainingBytes(batch, optStates int) float64 {
	side, k := float64(max(c.Side, 28)), float64(c.Classes)
	params := 16*(64+1) + 32*(16*16+1) + 32*(512+1) + (32+1)*k
	// Per image: the input; each convolution's output and Tanh (13², 5²);
	// the pools (12², 4²); the hidden layer and its Tanh; the logits.
	act := side*side + 2*16*169 + 16*144 + 2*32*25 + 32*16 + 2*32 + k
	return 4 * (params*float64(2+optStates) + float64(batch)*act)
}
