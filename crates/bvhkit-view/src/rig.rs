//! Camera control: framing, mouse mapping and following a joint.
//!
//! The player owns one [`bvhkit_render::Camera`]; this module only decides
//! how input moves it, so it can be tested without a window.

use bvhkit_render::glam::DVec3;
use bvhkit_render::{Camera, Stage};

/// Default view direction, degrees about +Y (front-right of the figure).
pub const DEFAULT_AZIMUTH: f64 = 35.0;
/// Default elevation, degrees above the ground plane.
pub const DEFAULT_ELEVATION: f64 = 15.0;
/// Degrees of orbit per pixel dragged.
pub const ORBIT_DEG_PER_PX: f64 = 0.35;

/// The camera that frames every figure of `stage` over its whole motion,
/// looking from the direction of `cam` (its azimuth and elevation) on a
/// viewport of its size.
#[must_use]
pub fn frame_all(stage: &Stage, cam: &Camera) -> Camera {
    stage.camera(cam.azimuth, cam.elevation, cam.width, cam.height)
}

/// Orbits for a mouse drag of `(dx, dy)` pixels: dragging right turns the
/// scene to the right, dragging down raises the eye.
pub fn drag_orbit(cam: &mut Camera, dx: f64, dy: f64) {
    cam.orbit(-dx * ORBIT_DEG_PER_PX, dy * ORBIT_DEG_PER_PX);
}

/// Zooms for a scroll of `scroll` points (positive = wheel away from the
/// user = closer), about 10% per wheel notch of 50 points.
pub fn scroll_zoom(cam: &mut Camera, scroll: f64) {
    if scroll.is_finite() {
        cam.zoom((-scroll * 0.002).exp());
    }
}

/// Keeps a moving point (a followed joint) at the same place on screen.
///
/// Each frame, [`Follow::update`] moves the camera target by how far the
/// point moved since the last update, so the user can still orbit, pan and
/// zoom around it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Follow {
    last: Option<DVec3>,
}

impl Follow {
    /// Starts following `point`: centres the camera on it.
    pub fn start(&mut self, cam: &mut Camera, point: DVec3) {
        if point.is_finite() {
            cam.target = point;
            self.last = Some(point);
        }
    }

    /// Stops following (the camera stays where it is).
    pub fn stop(&mut self) {
        self.last = None;
    }

    /// Whether a point is being followed.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.last.is_some()
    }

    /// Moves the camera along with `point`. A non-finite point is skipped;
    /// when not following, starts following (centring on `point`).
    pub fn update(&mut self, cam: &mut Camera, point: DVec3) {
        if !point.is_finite() {
            return;
        }
        match self.last {
            Some(last) => {
                cam.target += point - last;
                self.last = Some(point);
            }
            None => self.start(cam, point),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bvhkit_render::Clip;

    fn clip() -> Clip {
        Clip {
            name: "c".into(),
            joint_names: vec!["Hips".into(), "Head".into()],
            parents: vec![None, Some(0)],
            is_end_site: vec![false, false],
            frame_time: 0.1,
            n_frames: 2,
            positions: vec![
                DVec3::new(0.0, 90.0, 0.0),
                DVec3::new(0.0, 170.0, 0.0),
                DVec3::new(300.0, 90.0, 0.0),
                DVec3::new(300.0, 170.0, 0.0),
            ],
        }
    }

    #[test]
    fn frame_all_sees_every_frame_and_keeps_the_direction() {
        let c = clip();
        let stage = Stage::new(&[&c]);
        let mut cam = stage.camera(DEFAULT_AZIMUTH, DEFAULT_ELEVATION, 800, 600);
        cam.orbit(40.0, 10.0);
        cam.zoom(20.0);
        cam.pan(500.0, 0.0);
        let framed = frame_all(&stage, &cam);
        assert_eq!((framed.azimuth, framed.elevation), (cam.azimuth, cam.elevation));
        assert_eq!((framed.width, framed.height), (800, 600));
        for p in &c.positions {
            let (x, y, _) = framed.project(*p + stage.offsets()[0]).unwrap();
            assert!((0.0..=800.0).contains(&x) && (0.0..=600.0).contains(&y), "{x} {y}");
        }
    }

    #[test]
    fn drag_and_scroll() {
        let stage = Stage::new(&[&clip()]);
        let mut cam = stage.camera(0.0, 0.0, 400, 300);
        drag_orbit(&mut cam, 100.0, 20.0);
        assert!((cam.azimuth - (360.0 - 35.0)).abs() < 1e-9);
        assert!((cam.elevation - 7.0).abs() < 1e-9);
        let d = cam.distance;
        scroll_zoom(&mut cam, 50.0);
        assert!(cam.distance < d && cam.distance > d * 0.85);
        scroll_zoom(&mut cam, -50.0);
        assert!((cam.distance - d).abs() < 1e-9 * d);
        scroll_zoom(&mut cam, f64::NAN);
        assert!((cam.distance - d).abs() < 1e-9 * d);
    }

    #[test]
    fn follow_keeps_the_joint_on_the_same_pixel() {
        let c = clip();
        let stage = Stage::new(&[&c]);
        let mut cam = stage.camera(20.0, 10.0, 640, 480);
        let mut follow = Follow::default();
        assert!(!follow.is_active());
        let head = |f: usize| c.frame(f)[1] + stage.offsets()[0];
        follow.update(&mut cam, head(0));
        assert!(follow.is_active());
        let (x0, y0, _) = cam.project(head(0)).unwrap();
        assert!((x0 - 320.0).abs() < 1e-6 && (y0 - 240.0).abs() < 1e-6);
        // The user pans; following keeps the panned screen position.
        cam.pan(40.0, 0.0);
        let (xp, yp, _) = cam.project(head(0)).unwrap();
        follow.update(&mut cam, head(1));
        let (x1, y1, _) = cam.project(head(1)).unwrap();
        assert!((x1 - xp).abs() < 1e-6 && (y1 - yp).abs() < 1e-6);
        follow.update(&mut cam, DVec3::NAN);
        assert!(cam.target.is_finite());
        follow.stop();
        assert!(!follow.is_active());
    }
}
