#!/usr/bin/env python3
"""gen-models.py - writes the model descriptions tfgb ships in conf/models.

Each model is derived here from its published architecture, layer by layer,
in the order the framework creates its variables (the order TensorFlow's
replica device setter deals them out round-robin).  Run from the top of the
tree: python3 conf/models/gen-models.py; the files are committed, so neither
the build nor the tests need Python.  tests/check_model.c checks each file's
totals against the published parameter counts named in its header.

File format: '#' starts a comment; the first
other line is `model NAME`; then one variable per line,
    NAME DTYPE DIMS KIND
DIMS comma-separated (a scalar is `scalar`), KIND `trainable` (pulled from
its PS and pushed back as a gradient every step) or `statistic` (a
non-trainable variable such as batch normalisation's moving mean and
variance, held on the PS and updated by the worker every step).
"""
import os

class M:
    def __init__(s, name): s.name=name; s.v=[]
    def var(s, name, shape, kind='trainable'): s.v.append((name, shape, kind))
    def conv(s, name, k, cin, cout, bias):
        kh, kw = (k, k) if isinstance(k, int) else k
        s.var(name+'/kernel', (kh, kw, cin, cout))
        if bias: s.var(name+'/bias', (cout,))
    def bn(s, name, c, scale=True):
        if scale: s.var(name+'/gamma', (c,))
        s.var(name+'/beta', (c,))
        s.var(name+'/moving_mean', (c,), 'statistic')
        s.var(name+'/moving_variance', (c,), 'statistic')
    def dense(s, name, cin, cout):
        s.var(name+'/kernel', (cin, cout)); s.var(name+'/bias', (cout,))
    def count(s, kind):
        n=0
        for _, sh, k in s.v:
            if k==kind:
                p=1
                for d in sh: p*=d
                n+=p
        return n

def resnet50():
    m=M('resnet50_v1')
    m.conv('conv1', 7, 3, 64, False); m.bn('bn_conv1', 64)
    cin=64
    for stage, (blocks, width) in enumerate([(3,64),(4,128),(6,256),(3,512)], start=2):
        for b in range(blocks):
            p='res%d%s' % (stage, 'abcdef'[b])
            out=width*4
            m.conv(p+'_branch2a', 1, cin, width, False); m.bn(p+'_bn2a', width)
            m.conv(p+'_branch2b', 3, width, width, False); m.bn(p+'_bn2b', width)
            m.conv(p+'_branch2c', 1, width, out, False); m.bn(p+'_bn2c', out)
            if b==0:
                m.conv(p+'_branch1', 1, cin, out, False); m.bn(p+'_bn1', out)
            cin=out
    m.dense('fc1000', 2048, 1000)
    return m

def vgg16():
    m=M('vgg16')
    cin=3
    for blk, (n, c) in enumerate([(2,64),(2,128),(3,256),(3,512),(3,512)], start=1):
        for i in range(1, n+1):
            m.conv('block%d_conv%d' % (blk, i), 3, cin, c, True); cin=c
    m.dense('fc1', 7*7*512, 4096); m.dense('fc2', 4096, 4096); m.dense('predictions', 4096, 1000)
    return m

def alexnet():
    m=M('alexnet')
    m.conv('conv1', 11, 3, 64, True); m.conv('conv2', 5, 64, 192, True)
    m.conv('conv3', 3, 192, 384, True); m.conv('conv4', 3, 384, 256, True)
    m.conv('conv5', 3, 256, 256, True)
    m.dense('fc6', 256*6*6, 4096); m.dense('fc7', 4096, 4096); m.dense('fc8', 4096, 1000)
    return m

def inception_v3():
    m=M('inception_v3')
    st={'i':0, 'cin':3}
    def cb(cin, cout, kh, kw):
        i=st['i']; st['i']+=1
        name='conv2d' if i==0 else 'conv2d_%d' % i
        bn='batch_normalization' if i==0 else 'batch_normalization_%d' % i
        m.conv(name, (kh, kw), cin, cout, False); m.bn(bn, cout, scale=False)
        return cout
    c=cb(3,32,3,3); c=cb(c,32,3,3); c=cb(c,64,3,3)
    c=cb(c,80,1,1); c=cb(c,192,3,3)
    cin=192
    # mixed 0, 1, 2: 35 x 35
    for pool in (32, 64, 64):
        b1=cb(cin,64,1,1)
        b5=cb(cin,48,1,1); b5=cb(b5,64,5,5)
        b3=cb(cin,64,1,1); b3=cb(b3,96,3,3); b3=cb(b3,96,3,3)
        bp=cb(cin,pool,1,1)
        cin=b1+b5+b3+bp
    # mixed 3: 17 x 17
    b3=cb(cin,384,3,3)
    bd=cb(cin,64,1,1); bd=cb(bd,96,3,3); bd=cb(bd,96,3,3)
    cin=b3+bd+cin
    # mixed 4-7
    for c7 in (128, 160, 160, 192):
        b1=cb(cin,192,1,1)
        b7=cb(cin,c7,1,1); b7=cb(b7,c7,1,7); b7=cb(b7,192,7,1)
        bd=cb(cin,c7,1,1)
        bd=cb(bd,c7,7,1); bd=cb(bd,c7,1,7); bd=cb(bd,c7,7,1); bd=cb(bd,192,1,7)
        bp=cb(cin,192,1,1)
        cin=b1+b7+bd+bp
    # mixed 8: 8 x 8
    b3=cb(cin,192,1,1); b3=cb(b3,320,3,3)
    b7=cb(cin,192,1,1); b7=cb(b7,192,1,7); b7=cb(b7,192,7,1); b7=cb(b7,192,3,3)
    cin=b3+b7+cin
    # mixed 9, 10
    for _ in range(2):
        b1=cb(cin,320,1,1)
        b3=cb(cin,384,1,1); b3a=cb(b3,384,1,3); b3b=cb(b3,384,3,1)
        bd=cb(cin,448,1,1); bd=cb(bd,384,3,3); bda=cb(bd,384,1,3); bdb=cb(bd,384,3,1)
        bp=cb(cin,192,1,1)
        cin=b1+b3a+b3b+bda+bdb+bp
    m.dense('predictions', cin, 1000)
    return m

def mobilenet_v1():
    m=M('mobilenet_v1')
    m.conv('conv1', 3, 3, 32, False); m.bn('conv1_bn', 32)
    cin=32
    # 13 depthwise separable blocks: a 3x3 depthwise convolution (one
    # filter per input channel) and a 1x1 pointwise one, each with its
    # batch normalisation; strides do not change the variables
    for i, c in enumerate([64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512,
                           1024, 1024], start=1):
        m.var('conv_dw_%d/depthwise_kernel' % i, (3, 3, cin, 1))
        m.bn('conv_dw_%d_bn' % i, cin)
        m.conv('conv_pw_%d' % i, 1, cin, c, False); m.bn('conv_pw_%d_bn' % i, c)
        cin=c
    # the classifier: a 1x1 convolution with bias after global pooling
    m.conv('conv_preds', 1, cin, 1000, True)
    return m

def mnist_mlp():
    m=M('mnist_mlp')
    m.dense('dense_1', 784, 512); m.dense('dense_2', 512, 512); m.dense('dense_3', 512, 10)
    return m

ABOUT = {
 'resnet50_v1': [
  'ResNet-50 v1: He, Zhang, Ren, Sun, "Deep Residual Learning for Image',
  'Recognition" (2015), Table 1, 50-layer column; 1000-class head.',
  'Convention: convolutions without bias, each followed by batch',
  'normalisation with scale (gamma) and offset (beta), as torchvision and',
  "tf_cnn_benchmarks build it: 25,557,032 trainable parameters",
  "(torchvision's total); the 53,120 moving statistics are listed as",
  '`statistic` (Keras counts them, and a bias per convolution, in its',
  '25,636,712).'],
 'vgg16': [
  'VGG-16: Simonyan, Zisserman, "Very Deep Convolutional Networks for',
  'Large-Scale Image Recognition" (2014), Table 1, configuration D;',
  '1000-class head. Convolutions and dense layers with bias, no batch',
  'normalisation: 138,357,544 parameters (Keras and torchvision agree).'],
 'alexnet': [
  'AlexNet: Krizhevsky, Sutskever, Hinton (2012), in the one-tower form of',
  'torchvision (64, 192, 384, 256, 256 filters; 9216-4096-4096-1000 dense',
  'layers), every layer with bias: 61,100,840 parameters (torchvision).'],
 'mobilenet_v1': [
  'MobileNet v1 (width 1.0, 224 x 224): Howard et al., "MobileNets: Efficient',
  'Convolutional Neural Networks for Mobile Vision Applications" (2017),',
  'Table 1, as Keras builds it (keras.applications MobileNet, alpha 1.0):',
  'convolutions without bias, each followed by batch normalisation with',
  'scale and offset; the 1000-class head a 1x1 convolution with bias.',
  '4,231,976 trainable parameters plus 21,888 moving statistics:',
  "4,253,864, Keras's total."],
 'mnist_mlp': [
  "The MNIST multilayer perceptron of Keras's examples (mnist_mlp.py):",
  '784-512-512-10, three dense layers with bias (dropout has no',
  'variables): 669,706 parameters.'],
 'inception_v3': [
  'Inception-v3: Szegedy et al., "Rethinking the Inception Architecture for',
  'Computer Vision" (2015), as Keras builds it (keras.applications',
  'InceptionV3, no auxiliary head): convolutions without bias, batch',
  'normalisation without scale (offset beta only); 1000-class head.',
  "23,817,352 trainable parameters plus 34,432 moving statistics:",
  "23,851,784, Keras's total."],
}

def write(m, path):
    t=m.count('trainable'); s=m.count('statistic')
    with open(path, 'w') as f:
        f.write('# %s - a tfgb model description, made by gen-models.py\n' % os.path.basename(path))
        for line in ABOUT[m.name]:
            f.write('# ' + line + '\n')
        f.write('# %d variables: %d trainable parameters, %d statistics, float32.\n'
                % (len(m.v), t, s))
        f.write('model %s\n' % m.name)
        for name, shape, kind in m.v:
            f.write('%s float32 %s %s\n' % (name, ','.join(str(d) for d in shape), kind))

if __name__ == '__main__':
    here=os.path.dirname(os.path.abspath(__file__))
    for fn, file in ((resnet50, 'resnet50.model'), (vgg16, 'vgg16.model'),
                     (alexnet, 'alexnet.model'), (inception_v3, 'inception_v3.model'),
                     (mobilenet_v1, 'mobilenet_v1.model'), (mnist_mlp, 'mnist_mlp.model')):
        m=fn(); write(m, os.path.join(here, file))
        print('%-20s %4d variables, %11d trainable, %6d statistics'
              % (file, len(m.v), m.count('trainable'), m.count('statistic')))
