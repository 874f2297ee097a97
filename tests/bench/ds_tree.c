/* SPDX-License-Identifier: MIT */
/*
 * ds_tree: an AVL tree, recursive insert and remove (depth is
 * logarithmic), one node per key.
 */
#include <stdlib.h>

#include "ds.h"

struct node {
    struct node *left;
    struct node *right;
    int64_t key;
    void *value;
    int height;
};

struct ds_tree {
    struct node *root;
    size_t count;
};

struct ds_tree *
ds_tree_new(void)
{
    return calloc(1, sizeof(struct ds_tree));
}

static void
free_nodes(struct node *n, void (*free_value)(void *))
{
    while (n) {
        struct node *right = n->right;

        free_nodes(n->left, free_value);
        if (free_value)
            free_value(n->value);
        free(n);
        n = right;
    }
}

void
ds_tree_free(struct ds_tree *t, void (*free_value)(void *))
{
    if (!t)
        return;
    free_nodes(t->root, free_value);
    free(t);
}

static int
height(const struct node *n)
{
    return n ? n->height : 0;
}

static void
update(struct node *n)
{
    int l = height(n->left), r = height(n->right);

    n->height = (l > r ? l : r) + 1;
}

static struct node *
rotate_right(struct node *n)
{
    struct node *l = n->left;

    if (!l)
        return n; /* not reached: balance() rotates toward a taller side */
    n->left = l->right;
    l->right = n;
    update(n);
    update(l);
    return l;
}

static struct node *
rotate_left(struct node *n)
{
    struct node *r = n->right;

    if (!r)
        return n; /* not reached: balance() rotates toward a taller side */
    n->right = r->left;
    r->left = n;
    update(n);
    update(r);
    return r;
}

static struct node *
balance(struct node *n)
{
    int bf;

    update(n);
    bf = height(n->left) - height(n->right);
    if (bf > 1) {
        if (height(n->left->left) < height(n->left->right))
            n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (bf < -1) {
        if (height(n->right->right) < height(n->right->left))
            n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

/* *added: 1 new node, 0 replaced, -1 allocation failure. */
static struct node *
insert(struct node *n, int64_t key, void *value, int *added)
{
    if (!n) {
        n = malloc(sizeof *n);
        if (!n) {
            *added = -1;
            return NULL;
        }
        n->left = n->right = NULL;
        n->key = key;
        n->value = value;
        n->height = 1;
        *added = 1;
        return n;
    }
    if (key == n->key) {
        n->value = value;
        *added = 0;
        return n;
    }
    if (key < n->key) {
        struct node *l = insert(n->left, key, value, added);

        if (l)
            n->left = l;
    } else {
        struct node *r = insert(n->right, key, value, added);

        if (r)
            n->right = r;
    }
    return *added == 1 ? balance(n) : n;
}

int
ds_tree_put(struct ds_tree *t, int64_t key, void *value)
{
    int added = 0;
    struct node *root = insert(t->root, key, value, &added);

    if (added < 0)
        return -1;
    t->root = root;
    t->count += (size_t)added;
    return 0;
}

void *
ds_tree_get(const struct ds_tree *t, int64_t key)
{
    const struct node *n = t->root;

    while (n && n->key != key)
        n = key < n->key ? n->left : n->right;
    return n ? n->value : NULL;
}

static struct node *
remove_min(struct node *n, struct node **min_out)
{
    if (!n->left) {
        *min_out = n;
        return n->right;
    }
    n->left = remove_min(n->left, min_out);
    return balance(n);
}

static struct node *
remove_key(struct node *n, int64_t key, struct node **gone)
{
    struct node *min;

    if (!n)
        return NULL;
    if (key < n->key) {
        n->left = remove_key(n->left, key, gone);
    } else if (key > n->key) {
        n->right = remove_key(n->right, key, gone);
    } else {
        *gone = n;
        if (!n->right)
            return n->left;
        n->right = remove_min(n->right, &min);
        min->left = n->left;
        min->right = n->right;
        return balance(min);
    }
    return balance(n);
}

bool
ds_tree_remove(struct ds_tree *t, int64_t key, void **value_out)
{
    struct node *gone = NULL;

    t->root = remove_key(t->root, key, &gone);
    if (!gone)
        return false;
    if (value_out)
        *value_out = gone->value;
    free(gone);
    t->count--;
    return true;
}

size_t
ds_tree_count(const struct ds_tree *t)
{
    return t->count;
}

int
ds_tree_height(const struct ds_tree *t)
{
    return height(t->root);
}

static int
walk(const struct node *n,
     int (*fn)(int64_t key, void *value, void *payload),
     void *payload)
{
    int rc;

    if (!n)
        return 0;
    rc = walk(n->left, fn, payload);
    if (rc == 0)
        rc = fn(n->key, n->value, payload);
    if (rc == 0)
        rc = walk(n->right, fn, payload);
    return rc;
}

int
ds_tree_walk(const struct ds_tree *t,
             int (*fn)(int64_t key, void *value, void *payload),
             void *payload)
{
    return walk(t->root, fn, payload);
}
