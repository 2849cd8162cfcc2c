<?php
/**
 * Invalidations for user changes.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Users: a public profile change purges the pages and REST responses showing the author; a
 * deletion purges them hard, with the posts reassigned to another author.
 */
class User_Changes extends Change_Handler {

	/**
	 * Above this many reassigned posts a deletion purges the whole site instead of each post.
	 */
	const MAX_REASSIGNED_POSTS = 500;

	/** @var array<int,array> User snapshots before update. */
	private $users_before = array();

	/** @var array<int,int[]> Public posts of users being deleted with their posts reassigned. */
	private $reassigned = array();

	/**
	 * Filter `wp_pre_insert_user_data`: snapshot the public profile before an update.
	 *
	 * @param array $data    User data.
	 * @param bool  $update  Update.
	 * @param int   $user_id User id.
	 * @return array
	 */
	public function on_user_before( $data, $update = false, $user_id = null ) {
		if ( $update && $user_id ) {
			$this->users_before[ (int) $user_id ] = $this->user_state( (int) $user_id );
		}
		return $data;
	}

	/**
	 * Public profile fields of a user.
	 *
	 * @param int $user_id User id.
	 * @return array
	 */
	private function user_state( $user_id ) {
		$user = get_userdata( $user_id );
		if ( ! $user ) {
			return array();
		}
		return array(
			'display_name' => $user->display_name,
			'nicename'     => $user->user_nicename,
			'url'          => $user->user_url,
			'description'  => (string) get_user_meta( $user_id, 'description', true ),
			'link'         => get_author_posts_url( $user_id, $user->user_nicename ),
		);
	}

	/**
	 * Action `profile_update` (after meta is saved).
	 *
	 * @param int $user_id User id.
	 */
	public function on_profile_update( $user_id ) {
		$user_id = (int) $user_id;
		$before  = $this->users_before[ $user_id ] ?? null;
		unset( $this->users_before[ $user_id ] );
		$after = $this->user_state( $user_id );
		if ( null !== $before && $before === $after ) {
			return;
		}
		if ( ! count_user_posts( $user_id, 'post', true ) && ! count_user_posts( $user_id, 'page', true ) ) {
			return;
		}
		$s   = $this->scheme();
		$inv = ( new Invalidation() )
			->tags( array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ), $s->rest_collection( 'users' ) ), true )
			->reason( sprintf( 'user %d profile updated', $user_id ) );
		if ( null !== $before && $before['link'] !== $after['link'] ) {
			// Both archives with their pages and feeds: WordPress answers an unknown author's
			// feed with an empty 200 feed, which may be cached at the new address.
			$inv->prefixes( array( $before['link'], $after['link'] ) );
		}
		$this->queue( $inv );
	}

	/**
	 * Action `delete_user` (before the deletion): `wp_delete_user()` reassigns posts with direct
	 * SQL, no post hook runs, so the posts whose author changes are noted now.
	 *
	 * @param int      $user_id  User being deleted.
	 * @param int|null $reassign Reassigned to.
	 */
	public function on_user_deleting( $user_id, $reassign = null ) {
		if ( ! $reassign ) {
			return; // Without reassignment the posts are deleted one by one, with their hooks.
		}
		$this->reassigned[ (int) $user_id ] = array_map(
			'intval',
			get_posts(
				array(
					'author'           => (int) $user_id,
					'post_type'        => 'any',
					'post_status'      => 'publish',
					'fields'           => 'ids',
					'numberposts'      => self::MAX_REASSIGNED_POSTS + 1,
					'suppress_filters' => true,
				)
			)
		);
	}

	/**
	 * Action `deleted_user`: the user's pages and REST item, hard (a deleted user is never shown
	 * again); with reassigned posts, both authors and each post's pages and REST item.
	 *
	 * @param int      $user_id  Deleted user.
	 * @param int|null $reassign Reassigned to.
	 */
	public function on_user_deleted( $user_id, $reassign = null ) {
		$s     = $this->scheme();
		$tags  = array( $s->user( $user_id ), $s->author_listing( $user_id ), $s->rest_user( $user_id ), $s->rest_collection( 'users' ) );
		$posts = $this->reassigned[ (int) $user_id ] ?? array();
		unset( $this->reassigned[ (int) $user_id ] );
		$inv = ( new Invalidation() )->reason( sprintf( 'user %d deleted', $user_id ) );
		if ( $reassign ) {
			$tags[] = $s->author_listing( (int) $reassign );
		}
		if ( count( $posts ) > self::MAX_REASSIGNED_POSTS ) {
			$inv->everything();
		}
		foreach ( $posts as $post_id ) {
			$tags = array_merge( $tags, array( $s->post( $post_id ), $s->post_author( $post_id ), $s->rest_post( $post_id ) ) );
		}
		$this->queue( $inv->tags( $tags ) );
	}
}
